// A one-line progress bar on stderr while a benchmark runs (only on a terminal, or when forced).

export class Progress {
  private readonly start = performance.now();
  private errors = 0;
  private last = 0;
  private readonly tty: boolean;

  constructor(
    private readonly label: string,
    private readonly total: number,
    enabled: boolean,
  ) {
    this.tty = enabled && process.stderr.isTTY === true;
    if (enabled && !this.tty) process.stderr.write(`${label}: ${total} requests…\n`);
  }

  update(done: number, failed: boolean): void {
    if (failed) this.errors++;
    if (!this.tty) return;
    const now = performance.now();
    if (now - this.last < 100 && done < this.total) return;
    this.last = now;
    const width = 30;
    const filled = Math.round((done / Math.max(1, this.total)) * width);
    const bar = "█".repeat(filled) + "░".repeat(width - filled);
    const secs = ((now - this.start) / 1000).toFixed(0);
    process.stderr.write(
      `\r${this.label.padEnd(32)} ${bar} ${done}/${this.total}  errors ${this.errors}  ${secs}s `,
    );
  }

  finish(): void {
    const secs = ((performance.now() - this.start) / 1000).toFixed(1);
    if (this.tty) process.stderr.write("\n");
    process.stderr.write(`${this.label}: done in ${secs} s, ${this.errors} error(s)\n`);
  }
}
