/**
 * Small parts the resource pages share (webhooks, keywords, media and templates, keys, people):
 * a status line that takes the focus after an action removed or replaced the focused control, and
 * the reading of a whole list, page after page, for the questions that must name every record
 * concerned (the templates that use an image, the groups a keyword feeds).
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { pagination } from '../api.ts';
import type { PageAnswer } from './list.tsx';

/** A status message and how many were said (so that the same text said twice still takes the focus). */
export interface NoticeState {
  text: string | undefined;
  seq: number;
}

/** A page's status message: `say(text)` shows it and moves the focus to it. */
export function useNotice(): { notice: NoticeState; say: (text: string | undefined) => void } {
  const [notice, setNotice] = useState<NoticeState>({ text: undefined, seq: 0 });
  return { notice, say: (text) => setNotice((n) => ({ text, seq: n.seq + 1 })) };
}

/**
 * The status line of `useNotice`: always in the page (a live region must exist before its text
 * changes to be announced), focusable from script (tabIndex −1), focused whenever a text is said:
 * after a delete or a redeliver, the control that had the focus is gone, and the focus must not fall
 * to <body>.
 */
export function Notice(props: { notice: NoticeState }) {
  const ref = useRef<HTMLParagraphElement>(null);
  useEffect(() => {
    if (props.notice.text !== undefined && props.notice.seq > 0) ref.current?.focus();
  }, [props.notice.seq]);
  return (
    <p ref={ref} role="status" tabIndex={-1} class="notice" data-testid="notice">
      {props.notice.text ?? ''}
    </p>
  );
}

/** Moves the focus to the page's heading (main.tsx made it focusable): after Done hid a secret, say. */
export function focusHeading(): void {
  const heading = document.querySelector<HTMLElement>('main h1');
  if (heading === null) return;
  heading.tabIndex = -1;
  heading.focus();
}

/** Every record of a list operation, read 100 a page (at most `maxPages` pages); `complete` false when more were left. */
export async function everyPage<T>(
  load: (page: number) => Promise<PageAnswer<T>>,
  maxPages = 50,
): Promise<{ rows: T[]; complete: boolean } | undefined> {
  const rows: T[] = [];
  for (let page = 1; page <= maxPages; page++) {
    const { data, error, response } = await load(page);
    if (error !== undefined || data === undefined) return undefined;
    rows.push(...data);
    const pages = pagination(response);
    if (page >= pages.pages) return { rows, complete: true };
  }
  return { rows, complete: false };
}

/**
 * The whole of a list, loaded again whenever `deps` change (undefined while loading or when it
 * cannot be read: the pages then say less, never something false).
 */
export function useEveryPage<T>(
  load: (page: number) => Promise<PageAnswer<T>>,
  deps: readonly unknown[],
): { rows: T[]; complete: boolean } | undefined {
  const [all, setAll] = useState<{ rows: T[]; complete: boolean } | undefined>();
  useEffect(() => {
    let live = true;
    everyPage(load)
      .then((result) => live && setAll(result))
      .catch(() => live && setAll(undefined));
    return () => {
      live = false;
    };
  }, deps);
  return all;
}
