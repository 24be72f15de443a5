-- The date the goods or services of a document were delivered (EN 16931 BT-72, "actual delivery
-- date"), when the seller states it. An e-invoice with an intra-community supply needs it; every
-- other document may leave it out.
ALTER TABLE invoices ADD COLUMN delivered_on date;
