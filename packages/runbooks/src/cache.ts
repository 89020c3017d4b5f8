/**
 * A small TTL cache of loaded values. Concurrent loads of one key share a single load, and a
 * failed load is not remembered (the next caller tries again).
 */
export class TtlCache<T> {
  private readonly entries = new Map<string, { value: T; expiresAt: number }>();
  private readonly loading = new Map<string, Promise<T>>();

  constructor(
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string, load: () => Promise<T>): Promise<T> {
    const entry = this.entries.get(key);
    if (entry && entry.expiresAt > this.now()) return entry.value;
    if (entry) this.entries.delete(key);
    const pending = this.loading.get(key);
    if (pending) return pending;
    const promise = load().then(
      (value) => {
        this.entries.set(key, { value, expiresAt: this.now() + this.ttlMs });
        this.loading.delete(key);
        return value;
      },
      (err: unknown) => {
        this.loading.delete(key);
        throw err;
      },
    );
    this.loading.set(key, promise);
    return promise;
  }
}
