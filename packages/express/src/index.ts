import { type ChargePerCallOptions, chargeClient, chargeForCall } from '@tollbook/client';
import type { NextFunction, Request, RequestHandler, Response } from 'express';

export type { ChargePerCallOptions } from '@tollbook/client';

/**
 * Express middleware: charges the caller's prepaid Tollbook balance before the handler runs.
 * A paid call continues with the charge in `res.locals.tollbook`; a balance that cannot carry
 * it gets 402 with `top_up.url` (pay it to top up) and `balance_url`; an unnamed caller 401.
 */
export function chargePerCall(options: ChargePerCallOptions<Request>): RequestHandler {
  const tollbook = chargeClient(options);
  return (req: Request, res: Response, next: NextFunction) => {
    chargeForCall(tollbook, options, req, {
      method: req.method,
      url: req.originalUrl,
      headers: req.headers,
    }).then((outcome) => {
      if (outcome.ok) {
        res.locals.tollbook = outcome.charge;
        next();
        return;
      }
      res.status(outcome.status).json(outcome.body);
    }, next);
  };
}
