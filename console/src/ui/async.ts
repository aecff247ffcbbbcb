import { useCallback, useEffect, useRef, useState } from 'preact/hooks';
import { ApiError } from '../api.ts';

export type Async<T> =
  | { state: 'idle'; data?: undefined }
  | { state: 'loading'; data?: T }
  | { state: 'ok'; data: T }
  | { state: 'error'; error: ApiError; data?: T };

export function asApiError(err: unknown): ApiError {
  return err instanceof ApiError
    ? err
    : new ApiError(0, 'Unexpected error', err instanceof Error ? err.message : String(err));
}

/** Runs `load` now and whenever `deps` change; `reload()` runs it again. A late answer of a stale run is dropped. */
export function useAsync<T>(load: () => Promise<T>, deps: unknown[]): Async<T> & { reload(): void } {
  const [value, setValue] = useState<Async<T>>({ state: 'loading' });
  const run = useRef(0);
  const reload = useCallback(() => {
    const id = ++run.current;
    setValue((v) => ({ state: 'loading', ...('data' in v && v.data !== undefined ? { data: v.data } : {}) }));
    load().then(
      (data) => id === run.current && setValue({ state: 'ok', data }),
      (err) => id === run.current && setValue({ state: 'error', error: asApiError(err) }),
    );
  }, deps);
  useEffect(reload, [reload]);
  return { ...value, reload };
}

/** An action started by the operator (a button): idle until run. */
export function useAction<A extends unknown[], T>(act: (...args: A) => Promise<T>) {
  const [value, setValue] = useState<Async<T>>({ state: 'idle' });
  const run = async (...args: A): Promise<T | undefined> => {
    setValue({ state: 'loading' });
    try {
      const data = await act(...args);
      setValue({ state: 'ok', data });
      return data;
    } catch (err) {
      setValue({ state: 'error', error: asApiError(err) });
      return undefined;
    }
  };
  return { ...value, run, reset: () => setValue({ state: 'idle' }) };
}
