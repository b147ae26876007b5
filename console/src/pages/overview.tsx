import { useEffect, useState } from 'preact/hooks';
import type { components } from '../../../clients/typescript/src/index.ts';
import { errorText, type Api } from '../api.ts';
import { ErrorCodeText } from '../error-codes.tsx';
import { StatsChart } from './chart.tsx';
import { When } from './ui.tsx';

type Bucket = components['schemas']['StatsBucket'];
type Scheduled = components['schemas']['ScheduledSingleMessage'];

interface OverviewData {
  credits: number | undefined;
  buckets: Bucket[];
  topErrors: [string, number][];
  needAction: Scheduled[];
}

/** Scheduled messages with this status need action (docs/API.md §9.10: 2 Action Required). */
const ACTION_REQUIRED = 2;
/** Days the overview counts: today and the 6 before it. */
const DAYS = 7;

/** `YYYY-MM-DD` of the instant `ms` on the wall clock of `timeZone`. */
export function zoneDay(timeZone: string, ms: number): string {
  const parts = new Intl.DateTimeFormat('en-CA', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit' }).formatToParts(
    new Date(ms),
  );
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? '';
  return `${part('year')}-${part('month')}-${part('day')}`;
}

/** The calendar day `n` days after `day` (`YYYY-MM-DD`; n may be negative). */
function addDays(day: string, n: number): string {
  const d = new Date(`${day}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + n);
  return d.toISOString().slice(0, 10);
}

/**
 * sms/stats's `from` and `to` for the last `days` calendar days in the service's time zone, today
 * included: from the first one's midnight to today's last second. The range is whole buckets,
 * both ends included (docs/API.md §10.9), so this is exactly `days` day buckets, where the default
 * range ("to" less 7 × 24 hours) would be 8.
 */
export function lastDays(timeZone: string, days: number, now = Date.now()): { from: string; to: string } {
  const today = zoneDay(timeZone, now);
  return { from: `${addDays(today, -(days - 1))} 00:00:00`, to: `${today} 23:59:59` };
}

/**
 * The overview: credits (credits/balance), the last 7 days (exactly 7 day buckets of sms/stats) as
 * figures and a chart with the delivery rate, the most common ErrorCodes of the latest 100 outbound
 * messages (sms/index), explained, and the scheduled messages needing action
 * (sms/single-schedule-messages). A credential without `credits:read` or `sms:read` sees the parts
 * it may read.
 */
export function Overview(props: { api: Api }) {
  const [data, setData] = useState<OverviewData | undefined>();
  const [error, setError] = useState<string | undefined>();

  useEffect(() => {
    let live = true;
    void (async () => {
      const { api } = props;
      const sms = api.can('sms:read');
      const range = lastDays(api.session.TimeZone, DAYS);
      // What the credential may not read is left out (undefined), not asked for.
      const ask = <T,>(allowed: boolean, call: () => Promise<T>) => (allowed ? call() : Promise.resolve(undefined));
      const [balance, stats, recent, scheduled] = await Promise.all([
        ask(api.can('credits:read'), () => api.GET('/v1/credits/balance')),
        ask(sms, () => api.GET('/v1/sms/stats', { params: { query: { interval: 'day', ...range } } })),
        ask(sms, () => api.GET('/v1/sms/index', { params: { query: { Direction: 'Outbound', 'per-page': '100' } } })),
        ask(sms, () => api.GET('/v1/sms/single-schedule-messages', { params: { query: { 'per-page': '100' } } })),
      ]);
      if (!live) return;
      const failed = [balance, stats, recent, scheduled].find((r) => r !== undefined && r.error !== undefined);
      if (failed) return setError(errorText(failed.error, failed.response.status));
      const errors = new Map<string, number>();
      for (const m of recent?.data ?? []) if (m.ErrorCode) errors.set(m.ErrorCode, (errors.get(m.ErrorCode) ?? 0) + 1);
      setData({
        credits: balance?.data?.AvailableCredits,
        buckets: stats?.data ?? [],
        topErrors: [...errors].sort((a, b) => b[1] - a[1]).slice(0, 5),
        needAction: (scheduled?.data ?? []).filter((s) => s.Status_Id === ACTION_REQUIRED),
      });
    })().catch(() => live && setError('The server could not be reached.'));
    return () => {
      live = false;
    };
  }, [props.api]);

  if (error !== undefined || data === undefined)
    return (
      <>
        <h1>Overview</h1>
        {error !== undefined ? (
          <p class="error" role="alert">
            {error}
          </p>
        ) : (
          <p role="status">Loading…</p>
        )}
      </>
    );

  const sum = (key: keyof Bucket) => data.buckets.reduce((n, b) => n + Number(b[key] ?? 0), 0);
  const outbound = sum('Outbound');
  const delivered = sum('Delivered');
  const first = data.buckets[0]?.Time?.slice(0, 10);
  const last = data.buckets[data.buckets.length - 1]?.Time?.slice(0, 10);
  const span = first === undefined ? '' : ` (${first} to ${last})`;
  return (
    <>
      <h1>Overview</h1>
      <div class="cards">
        <section class="card" aria-labelledby="credits-h">
          <h2 id="credits-h">Credits</h2>
          <p class="figure" data-testid="credits">
            {data.credits ?? '–'}
          </p>
        </section>
        <section class="card" aria-labelledby="rate-h">
          <h2 id="rate-h">Delivery rate, 7 days</h2>
          <p class="figure" data-testid="rate">
            {outbound === 0 ? '–' : `${Math.round((delivered / outbound) * 100)}%`}
          </p>
          <p class="hint" data-testid="week-sent" data-days={data.buckets.length}>
            {delivered} delivered of {outbound} sent{span}
          </p>
        </section>
        <section class="card" aria-labelledby="week-h">
          <h2 id="week-h">Last 7 days</h2>
          <p data-testid="week-figures">
            {outbound} sent · {sum('Inbound')} received · {sum('Credits')} credits spent
          </p>
          <p class="hint">Today and the 6 days before it, in the service's time zone.</p>
        </section>
      </div>
      <section aria-labelledby="chart-h">
        <h2 id="chart-h">Messages per day, last 7 days</h2>
        <StatsChart buckets={data.buckets} />
      </section>
      <div class="cards">
        <section class="card" aria-labelledby="errors-h">
          <h2 id="errors-h">Most common errors</h2>
          {data.topErrors.length === 0 ? (
            <p class="hint">None in the latest 100 outbound messages.</p>
          ) : (
            <ul>
              {data.topErrors.map(([code, count]) => (
                <li key={code}>
                  <ErrorCodeText api={props.api} code={code} /> ({count})
                </li>
              ))}
            </ul>
          )}
        </section>
        <section class="card" aria-labelledby="action-h">
          <h2 id="action-h">Scheduled messages needing action</h2>
          {data.needAction.length > 0 && <p class="hint">Edit or cancel them on the Scheduled page.</p>}
          {data.needAction.length === 0 ? (
            <p class="hint">None.</p>
          ) : (
            <ul>
              {data.needAction.map((s) => (
                <li key={s.Id}>
                  <When value={s.DateTime} /> to +{s.MobilePhone}: <span class="text">{s.Message}</span>
                </li>
              ))}
            </ul>
          )}
        </section>
      </div>
    </>
  );
}
