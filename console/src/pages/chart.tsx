import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import type { components } from '../../../clients/typescript/src/index.ts';

type Bucket = components['schemas']['StatsBucket'];

/** A bucket's `Time` (service time zone wall clock) as seconds, read as UTC so the axis shows it as it is. */
function seconds(time: string | undefined): number {
  return Date.parse(`${(time ?? '').replace(' ', 'T')}Z`) / 1000;
}

const SERIES: readonly { key: keyof Bucket; label: string; stroke: string }[] = [
  { key: 'Outbound', label: 'Outbound', stroke: '#1f5fa8' },
  { key: 'Delivered', label: 'Delivered', stroke: '#1b7a3a' },
  { key: 'Inbound', label: 'Inbound', stroke: '#7a4ab0' },
  { key: 'Failed', label: 'Failed', stroke: '#b3261e' },
];

/** The sms/stats buckets as a uPlot line chart, as wide as its box (redrawn when that changes). */
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
        series: [{}, ...SERIES.map((s) => ({ label: s.label, stroke: s.stroke, width: 2 }))],
        axes: [{}, { size: 40 }],
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
  return <div ref={box} class="chart" role="img" aria-label="Messages per day, last 7 days" />;
}
