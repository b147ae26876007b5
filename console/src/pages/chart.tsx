import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { components } from '../../../clients/typescript/src/index.ts';

type Bucket = components['schemas']['StatsBucket'];

/** Seconds in a day: the buckets are days, so are the ticks. */
const DAY = 86_400;

/** A bucket's `Time` (service time zone wall clock) as seconds, read as UTC so the axis shows it as it is. */
function seconds(time: string | undefined): number {
  return Date.parse(`${(time ?? '').replace(' ', 'T')}Z`) / 1000;
}

/** The day of `s` (seconds of a wall-clock time read as UTC): `MM-DD` on the axis, `YYYY-MM-DD` in full. */
function day(s: number, full = false): string {
  const iso = new Date(s * 1000).toISOString();
  return full ? iso.slice(0, 10) : iso.slice(5, 10);
}

const SERIES: readonly { key: keyof Bucket; label: string; stroke: string }[] = [
  { key: 'Outbound', label: 'Outbound', stroke: '#1f5fa8' },
  { key: 'Delivered', label: 'Delivered', stroke: '#1b7a3a' },
  { key: 'Inbound', label: 'Inbound', stroke: '#7a4ab0' },
  { key: 'Failed', label: 'Failed', stroke: '#b3261e' },
];

/**
 * The sms/stats day buckets as a uPlot line chart, as wide as its box (redrawn when that changes).
 * The x axis ticks are days (one a day, or every 2 or 7 when narrow), never hours; the labels
 * drawn are also in the box's `data-ticks` (the canvas holds no text). After it, the same figures
 * as a table that only screen readers read (nothing focusable: the overview keeps no Tab stop).
 */
export function StatsChart(props: { buckets: readonly Bucket[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data: uPlot.AlignedData = [
      props.buckets.map((b) => seconds(b.Time)),
      ...SERIES.map((s) => props.buckets.map((b) => Number(b[s.key] ?? 0))),
    ];
    const width = () => Math.max(200, el.clientWidth);
    const chart = new uPlot(
      {
        width: width(),
        height: 240,
        tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
        series: [
          { label: 'Day', value: (_u, v) => (v === null ? '—' : day(v, true)) },
          ...SERIES.map((s) => ({ label: s.label, stroke: s.stroke, width: 2 })),
        ],
        axes: [
          {
            space: 44,
            incrs: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY],
            values: (_u, splits) => {
              const labels = splits.map((s) => day(s));
              el.dataset.ticks = labels.join(' ');
              return labels;
            },
          },
          { size: 40 },
        ],
      },
      data,
      el,
    );
    const observer = new ResizeObserver(() => chart.setSize({ width: width(), height: 240 }));
    observer.observe(el);
    return () => {
      observer.disconnect();
      chart.destroy();
    };
  }, [props.buckets]);
  return (
    <>
      <div
        ref={box}
        class="chart"
        role="img"
        aria-label="Messages per day, last 7 days (the figures follow as a table)"
        data-testid="chart"
      />
      <table class="visually-hidden" data-testid="chart-table">
        <caption>Messages per day, last 7 days</caption>
        <thead>
          <tr>
            <th scope="col">Day</th>
            {SERIES.map((s) => (
              <th key={s.key} scope="col">
                {s.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.buckets.map((b) => (
            <tr key={b.Time} data-testid="chart-day">
              <td>{(b.Time ?? '').slice(0, 10)}</td>
              {SERIES.map((s) => (
                <td key={s.key}>{Number(b[s.key] ?? 0)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </>
  );
}
