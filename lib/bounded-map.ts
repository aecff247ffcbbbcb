/**
 * A Map that forgets its oldest entries beyond a size: in-memory state keyed by identity must
 * not grow without bound (sub-identities under the agent path are unlimited).
 */
export class BoundedMap<K, V> extends Map<K, V> {
  constructor(private readonly max: number) {
    super();
  }
  override set(key: K, value: V): this {
    if (!this.has(key) && this.size >= this.max) {
      const oldest = this.keys().next();
      if (!oldest.done) this.delete(oldest.value);
    }
    return super.set(key, value);
  }
}
