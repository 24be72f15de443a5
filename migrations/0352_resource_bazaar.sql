-- What an endpoint card tells x402 clients through the public discovery list (the bazaar
-- extension): a description, the HTTP method, JSON Schemas of its input and output, and an example
-- of each that fits its schema (the extension publishes an output schema only with an example).
-- Each is a JSON object of at most 20,000 characters.
ALTER TABLE resources
  ADD COLUMN description text NOT NULL DEFAULT '' CHECK (length(description) <= 1000),
  ADD COLUMN http_method text CHECK (http_method IN ('GET', 'HEAD', 'DELETE', 'POST', 'PUT', 'PATCH')),
  ADD COLUMN input_schema jsonb
    CHECK (input_schema IS NULL OR (jsonb_typeof(input_schema) = 'object' AND length(input_schema::text) <= 20000)),
  ADD COLUMN input_example jsonb
    CHECK (input_example IS NULL OR (jsonb_typeof(input_example) = 'object' AND length(input_example::text) <= 20000)),
  ADD COLUMN output_schema jsonb
    CHECK (output_schema IS NULL OR (jsonb_typeof(output_schema) = 'object' AND length(output_schema::text) <= 20000)),
  ADD COLUMN output_example jsonb
    CHECK (output_example IS NULL OR length(output_example::text) <= 20000);
