// A credential read from config: usable where it is sent, and shown as "[redacted]" wherever config is
// printed, logged or serialised, so that no code path can leak it by accident.

import { inspect } from "node:util";

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  /** The value itself; call it only where it is sent. */
  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return "[redacted]";
  }

  toString(): string {
    return "[redacted]";
  }

  [inspect.custom](): string {
    return "Secret([redacted])";
  }
}
