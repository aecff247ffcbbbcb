import Module from 'node:module';

type Load = (request: string, parent: { filename?: string | null } | undefined, isMain: boolean) => unknown;

/**
 * From now on, when a CommonJS module whose file name matches `parent` requires one of
 * `requests`, it gets a stand-in that loads the real module when first touched (a property read,
 * `in`, key listing). For dependencies that require packages at load time but use them only on
 * a path this system never takes: they then cost nothing. Only for plain `require(x)` results
 * read inside functions: a module that reads the stand-in while it loads gains nothing.
 */
export function deferRequires(parent: RegExp, requests: ReadonlySet<string>): void {
  const loader = Module as unknown as { _load: Load };
  const load = loader._load;
  loader._load = function deferringLoad(this: unknown, request, from, isMain) {
    if (requests.has(request) && from?.filename && parent.test(from.filename)) {
      return loadOnFirstUse(() => load.call(this, request, from, isMain) as object);
    }
    return load.call(this, request, from, isMain);
  };
}

/** An object that forwards to `load()`'s result, calling `load` once, on first use. */
export function loadOnFirstUse(load: () => object): object {
  let real: object | undefined;
  const target = () => {
    real ??= load();
    return real;
  };
  return new Proxy(
    {},
    {
      get: (_, key) => Reflect.get(target(), key),
      has: (_, key) => Reflect.has(target(), key),
      ownKeys: () => Reflect.ownKeys(target()),
      getOwnPropertyDescriptor: (_, key) => {
        const descriptor = Reflect.getOwnPropertyDescriptor(target(), key);
        // A proxy may not report a property as non-configurable that its (empty) target lacks.
        return descriptor && { ...descriptor, configurable: true };
      },
    },
  );
}
