/**
 * What each message `ErrorCode` means, from `GET /v1/errors` (docs/API.md): loaded once per
 * session, then every page that shows a code explains it. A family is listed with a placeholder
 * (`TWILIO_{code}`, `HTTP_{status}`): a code matches it when it has the same text around the
 * placeholder.
 */
import { useEffect, useState } from 'preact/hooks';
import type { Api } from './api.ts';

/** One entry of `GET /v1/errors`. */
export interface ErrorCodeInfo {
  Code: string;
  Meaning: string;
  /** 1 when the message will not be retried. */
  Final: number;
}

let cache: Promise<ErrorCodeInfo[]> | undefined;

/** The list of `GET /v1/errors` (once per page load; [] when it cannot be read). */
export function loadErrorCodes(api: Api): Promise<ErrorCodeInfo[]> {
  cache ??= api
    .call<ErrorCodeInfo[]>('GET', '/v1/errors')
    .then(({ data }) => (Array.isArray(data) ? data : []))
    .catch(() => []);
  return cache;
}

/** The entry explaining `code`: an exact Code first, then a family whose placeholder matches. */
export function explainCode(list: readonly ErrorCodeInfo[], code: string): ErrorCodeInfo | undefined {
  const exact = list.find((e) => e.Code === code);
  if (exact) return exact;
  return list.find((e) => {
    const m = /^(.*)\{[^}]+\}(.*)$/.exec(e.Code);
    return m !== null && code.length > m[1]!.length + m[2]!.length && code.startsWith(m[1]!) && code.endsWith(m[2]!);
  });
}

/** The list of error codes for a page (empty until loaded). */
export function useErrorCodes(api: Api): readonly ErrorCodeInfo[] {
  const [list, setList] = useState<readonly ErrorCodeInfo[]>([]);
  useEffect(() => {
    let live = true;
    void loadErrorCodes(api).then((l) => live && setList(l));
    return () => {
      live = false;
    };
  }, [api]);
  return list;
}

/** A message's `ErrorCode` with what it means ("" shows nothing). */
export function ErrorCodeText(props: { api: Api; code: string }) {
  const list = useErrorCodes(props.api);
  if (props.code === '') return null;
  const info = explainCode(list, props.code);
  return (
    <span class="error-code" data-testid="error-code">
      <code>{props.code}</code>
      {info !== undefined && (
        <>
          : {info.Meaning}
          {info.Final === 1 ? ' Not retried.' : ' Retried.'}
        </>
      )}
    </span>
  );
}
