import { type Static, Type } from '@sinclair/typebox';
import type { ServiceNumberRow } from '../../domain/admin-numbers.ts';
import type { AllAuditRow } from '../../domain/operators.ts';
import type { TimeFormat } from '../../lib/time.ts';
import { AuditEntryRecordSchema, AuditQuery, auditEntryRecord } from '../../records/audit.ts';
import { Int, NullableStr, PageQuery, Str } from '../../records/common.ts';
import { NUMBER_STATUSES } from '../../records/statuses.ts';

/**
 * The records only the operator sees (docs/API.md §16.4). They live here, beside the operator's
 * operations, not in src/records/: every schema of a record module becomes a component of the
 * public `/v1` OpenAPI document (docs/openapi.json), which holds no operator operation. The
 * operator's Account and Usage records are src/records/accounts.ts's, shared with sub-accounts.
 */

/** The operator's Number record: one account's hold on one number. */
export const ServiceNumberRecordSchema = Type.Object({
  Number: Str(),
  AccountId: Int(),
  Status_Id: Int(),
  Status_Description: Str(),
  Blocked_Date: NullableStr(),
  DateCreated: Str(),
});
export type ServiceNumberRecord = Static<typeof ServiceNumberRecordSchema>;

export const serviceNumberRecord =
  (time: TimeFormat) =>
  (r: ServiceNumberRow): ServiceNumberRecord => ({
    Number: r.number,
    AccountId: r.account_id,
    Status_Id: r.status_id,
    Status_Description: NUMBER_STATUSES[r.status_id] ?? '',
    // As the account's own Number record (API.md §9.2): null unless blocked (301 or 302).
    Blocked_Date: (r.status_id === 301 || r.status_id === 302) && r.blocked_at !== null ? time.dateTime(r.blocked_at) : null,
    DateCreated: time.dateTime(r.created_at),
  });

/** The body of numbers/create and numbers/update. */
export const ServiceNumberBodySchema = Type.Object({
  Number: Type.Optional(Type.String({ description: 'create only (required): a short code of 3 to 8 digits, or a phone number' })),
  AccountId: Type.Optional(Type.Integer({ description: 'the account that holds it (required on create); on update, moves it there' })),
  Status_Id: Type.Optional(
    Type.Integer({ description: '0 Active (default), 1 Inactive, 301 Temporarily blocked, 302 Permanently blocked' }),
  ),
});

/** The query of numbers/update and numbers/delete. */
export const ServiceNumberQuery = Type.Object({
  number: Type.String({ description: 'the number: a short code, or a phone number in any common writing' }),
  AccountId: Type.Optional(
    Type.String({ description: 'the account that holds it; required when several accounts hold the number (a shared short code)' }),
  ),
});

/** The filters of numbers/index. */
export const ServiceNumberListQuery = Type.Object({
  AccountId: Type.Optional(Type.String({ description: "only this account's numbers" })),
  Number: Type.Optional(Type.String({ description: 'only this number (every account that holds it)' })),
  ...PageQuery.properties,
});

/** The operator's Carrier record. */
export const CarrierRecordSchema = Type.Object({
  Name: Str(),
  Type: Type.String({ description: '`smpp`, `twilio`, `android` or `sandbox`' }),
  State: Type.String({ description: '`ready`, `down`, or `unknown` where no dispatcher runs in the answering process' }),
  InFlight: Type.Unsafe<number | null>({
    type: ['integer', 'null'],
    description: "submits awaiting the carrier's answer in this process's dispatcher; null where none runs",
  }),
  Submitted: Type.Integer({ description: 'messages the carrier accepted in the last hour (every instance)' }),
  Failed: Type.Integer({ description: 'of those, how many then ended Undelivered or Failed' }),
});
export type CarrierRecord = Static<typeof CarrierRecordSchema>;

/** The operator's Audit entry record: the account's Audit entry plus `AccountId`. */
export const OperatorAuditEntryRecordSchema = Type.Object({
  ...AuditEntryRecordSchema.properties,
  AccountId: Int(),
});
export type OperatorAuditEntryRecord = Static<typeof OperatorAuditEntryRecordSchema>;

export const operatorAuditEntryRecord = (time: TimeFormat) => {
  const entry = auditEntryRecord(time);
  return (r: AllAuditRow): OperatorAuditEntryRecord => ({ ...entry(r), AccountId: Number(r.account_id) });
};

/** The filters of the operator's audit/index. */
export const OperatorAuditQuery = Type.Object({
  ...AuditQuery.properties,
  AccountId: Type.Optional(Type.String({ description: "only this account's entries" })),
});
