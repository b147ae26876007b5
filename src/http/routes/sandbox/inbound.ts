import { Type } from '@sinclair/typebox';
import { inboundDeps, sandboxInbound } from '../../../domain/inbound.ts';
import { systemClock } from '../../../lib/time.ts';
import { isSandboxCarrier } from '../../../dispatch/index.ts';
import { MessageRecordSchema, messageRecord } from '../../../records/messages.ts';
import { defineOperation } from '../../operation.ts';

/** Body fields of sandbox/inbound (documentation; the checks and their messages are the domain's rules). */
const SandboxInboundBodySchema = Type.Object({
  From: Type.String({ description: 'the sender, a phone number in any common format' }),
  To: Type.Union([Type.Integer(), Type.String()], { description: 'an account number of the caller (short code or long number)' }),
  Message: Type.String({ maxLength: 1600, description: 'the text' }),
});

/**
 * sandbox/inbound (API.md §11.3): a made-up inbound text, run through API.md §11.5 exactly as a
 * carrier's text is (src/domain/inbound.ts). 201 with a list of the inbound Message records stored
 * for the caller's account: one, or none (an empty list) when the text went to another account's
 * keyword on a shared short code; `Location` to sms/view of that one record (none for an empty list).
 * Honours Idempotency-Key (API.md §7: every POST of the extensions does): a replay stores and sends nothing twice.
 *
 * Only while the sandbox is the carrier (`enabled`): otherwise the path is not registered and
 * answers 404 `Page not found.` as an unknown path does, before any other check.
 */
export const sandboxInboundOperation = defineOperation({
  id: 'sandbox.inbound',
  path: '/v1/sandbox/inbound',
  resource: 'sms',
  methods: ['POST'],
  summary: 'Make up an inbound text (sandbox carrier only)',
  success: 201,
  location: '/v1/sms/view',
  idempotent: true,
  enabled: (config) => isSandboxCarrier(config),
  schema: { body: SandboxInboundBodySchema, response: Type.Array(MessageRecordSchema) },
  handler: ({ store, config, time, clock }) => {
    const toRecord = messageRecord(time);
    const deps = inboundDeps(config, store, clock ?? systemClock);
    return async (ctx) => {
      return (await sandboxInbound(deps, ctx.accountId, ctx.body())).map(toRecord);
    };
  },
});
