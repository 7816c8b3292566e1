// When a learned fit should stop averaging and relearn: its misses run on one side. A fit forgetting
// slowly (λ close to 1) is right for noise and wrong for an engine that changed (throttled, a neighbour
// on the GPU, a new profile), which shows as a run of misses all late or all early; after `run` of them
// beyond `error` (relative) the caller resets the fit's confidence (OnlineLinear.doubt).

export class ChangeWatch {
  /** Consecutive misses beyond `error`: + late, − early. */
  private streak = 0;

  constructor(
    private readonly run: number,
    private readonly error: number,
  ) {}

  /** One observation against what the fit said; true when the run is complete (and it starts over). */
  changed(actualMs: number, predictedMs: number): boolean {
    const miss = (actualMs - predictedMs) / Math.max(1, actualMs);
    const side = miss > this.error ? 1 : miss < -this.error ? -1 : 0;
    this.streak = side === 0 || Math.sign(this.streak) !== side ? side : this.streak + side;
    if (Math.abs(this.streak) < this.run) return false;
    this.streak = 0;
    return true;
  }
}
