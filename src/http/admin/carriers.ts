import { Type } from '@sinclair/typebox';
import { carrierActivity } from '../../domain/operators.ts';
import { PageQuery } from '../../records/common.ts';
import { systemClock } from '../../lib/time.ts';
import { defineAdminOperation, type AdminRouteDeps } from './operation.ts';
import { CarrierRecordSchema, type CarrierRecord } from './records.ts';

/** The span of `Submitted` and `Failed`, in seconds: the last hour. */
export const CARRIER_ACTIVITY_SECONDS = 3600;

/**
 * `GET /admin/v1/carriers/index` (docs/API.md §16.4): each configured carrier (MSGSVC_CARRIERS
 * order), paginated: `Name`, `Type`, `State`, `InFlight`, `Submitted` and `Failed` in the last hour.
 *
 * Where each comes from, with several instances:
 * - `State` and `InFlight` are the answering process's view: its dispatcher's (or, in a
 *   `serve --workers` worker, its primary's for State). `State` is `ready` while the carrier takes
 *   submits, `down` while it cannot (an SMPP link down), and `unknown` where no dispatcher runs
 *   (MSGSVC_DISPATCHER=0, the dispatcher in a separate `msgsvc worker`); `InFlight` is null then.
 * - `Submitted` and `Failed` are counted in the database, so every instance gives the same answer:
 *   outbound messages the carrier accepted (their `sent_at`) in the hour before now, and how many of
 *   those ended Undelivered or Failed. A message refused before any carrier took it is in neither.
 */
export const adminCarriersIndex = defineAdminOperation({
  id: 'admin.carriers.index',
  path: '/admin/v1/carriers/index',
  methods: ['GET'],
  summary: 'List the carriers with their state and the last hour of traffic',
  success: 200,
  schema: { query: PageQuery, response: Type.Array(CarrierRecordSchema) },
  handler: (routeDeps) => {
    const deps = routeDeps as AdminRouteDeps;
    const clock = deps.clock ?? systemClock;
    const carriers = deps.config.carriers;
    return async (ctx) => {
      const states = deps.carrierStates?.();
      const stats = deps.dispatcherStats?.();
      const activity = await carrierActivity(deps.store, clock.nowSeconds() - CARRIER_ACTIVITY_SECONDS);
      const records: CarrierRecord[] = carriers.map((c) => {
        const state = states?.[c.name];
        const done = activity.get(c.name);
        return {
          Name: c.name,
          Type: c.kind,
          State: state === undefined ? 'unknown' : state === 'ok' ? 'ready' : 'down',
          InFlight: stats?.carriers[c.name]?.inFlight ?? null,
          Submitted: done?.submitted ?? 0,
          Failed: done?.failed ?? 0,
        };
      });
      return ctx.paginate(
        records.length,
        (limit, offset) => Promise.resolve(records.slice(offset, offset + limit)),
        (r) => r,
      );
    };
  },
});

export const adminCarriers = [adminCarriersIndex];
