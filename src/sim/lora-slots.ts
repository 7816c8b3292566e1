// LoRA adapter slots on the simulated GPU: at most `maxLoras` adapters resident at once, an idle one
// evicted least-recently-used to load another, and a load delay charged to the step that loads it.

export type LoraAdmission = "resident" | "load" | "blocked";

export class LoraSlots {
  readonly maxLoras: number;
  /** Resident adapters in least-recently-used order (first = evicted first). */
  private readonly resident: string[] = [];
  private readonly running = new Map<string, number>();
  loads = 0;

  constructor(maxLoras: number) {
    this.maxLoras = maxLoras;
  }

  /** Whether a request for `name` can start now, and whether that means loading the adapter. */
  check(name: string): LoraAdmission {
    if (this.resident.includes(name)) return "resident";
    if (this.resident.length < this.maxLoras) return "load";
    return this.resident.some((n) => !this.running.get(n)) ? "load" : "blocked";
  }

  /** Marks a request for `name` as running, loading (and evicting) as `check` said. */
  start(name: string): boolean {
    const i = this.resident.indexOf(name);
    let loaded = false;
    if (i >= 0) {
      this.resident.splice(i, 1);
    } else {
      if (this.resident.length >= this.maxLoras) {
        const victim = this.resident.findIndex((n) => !this.running.get(n));
        if (victim < 0) throw new Error(`no free LoRA slot for ${name}: call check() first`);
        this.resident.splice(victim, 1);
      }
      loaded = true;
      this.loads++;
    }
    this.resident.push(name);
    this.running.set(name, (this.running.get(name) ?? 0) + 1);
    return loaded;
  }

  stop(name: string): void {
    const n = (this.running.get(name) ?? 0) - 1;
    if (n > 0) this.running.set(name, n);
    else this.running.delete(name);
  }

  /** Whether requests for `name` are running now (they hold its slot). */
  isRunning(name: string): boolean {
    return (this.running.get(name) ?? 0) > 0;
  }

  /** Frees the slot of an idle adapter (unloaded at run time); its next request loads it again. */
  evict(name: string): boolean {
    const i = this.resident.indexOf(name);
    if (i < 0 || this.isRunning(name)) return false;
    this.resident.splice(i, 1);
    return true;
  }

  runningAdapters(): string[] {
    return [...this.running.keys()];
  }

  residentAdapters(): readonly string[] {
    return this.resident;
  }

  reset(): void {
    this.resident.length = 0;
    this.running.clear();
    this.loads = 0;
  }
}
