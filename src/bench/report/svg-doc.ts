// The pieces every chart shares: a standalone SVG 1.1 document, escaped text, compact numbers,
// colours and dash styles, and a width estimate for laying out labels without a font engine.

export const FONT = "DejaVu Sans, Helvetica, Arial, sans-serif";

/** Okabe–Ito: tells lines apart for colour-blind readers too; yellow left out, it vanishes on white. */
export const PALETTE = [
  "#0072B2",
  "#D55E00",
  "#009E73",
  "#CC79A7",
  "#E69F00",
  "#56B4E9",
  "#000000",
  "#7F7F7F",
];

/** Dash styles, told apart even at a legend's 28 px sample length. */
export const DASHES = ["", "8 4", "2 3", "12 3 2 3", "4 4 1 4"];

export function escapeXml(text: string): string {
  return text
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&apos;");
}

/** One decimal is finer than a pixel needs and keeps path data short. */
export function num(x: number): string {
  const r = Math.round(x * 10) / 10;
  return Object.is(r, -0) ? "0" : String(r);
}

/** Rough rendered width of `text` in a sans-serif font, so legends and labels get the room they need. */
export function textWidth(text: string, fontSize: number): number {
  let em = 0;
  for (const ch of text) {
    const code = ch.codePointAt(0) ?? 0;
    if (code >= 0x2e80)
      em += 1; // CJK and other full-width glyphs
    else if (/[A-Zmw@%]/.test(ch)) em += 0.8;
    else if (/[il.,:;'|! ()[\]-]/.test(ch)) em += 0.36;
    else em += 0.63; // DejaVu Sans, the usual sans-serif on Linux, runs wide
  }
  return em * fontSize;
}

export interface TextOptions {
  size?: number;
  anchor?: "start" | "middle" | "end";
  weight?: "bold";
  fill?: string;
  rotate?: number;
}

export function svgText(x: number, y: number, text: string, o: TextOptions = {}): string {
  const attrs = [`x="${num(x)}"`, `y="${num(y)}"`, `font-size="${o.size ?? 12}"`];
  if (o.anchor && o.anchor !== "start") attrs.push(`text-anchor="${o.anchor}"`);
  if (o.weight) attrs.push(`font-weight="${o.weight}"`);
  attrs.push(`fill="${o.fill ?? "#222"}"`);
  if (o.rotate) attrs.push(`transform="rotate(${o.rotate} ${num(x)} ${num(y)})"`);
  return `<text ${attrs.join(" ")}>${escapeXml(text)}</text>`;
}

export function svgLine(x1: number, y1: number, x2: number, y2: number, stroke: string, extra = ""): string {
  const tail = extra ? ` ${extra}` : "";
  return `<line x1="${num(x1)}" y1="${num(y1)}" x2="${num(x2)}" y2="${num(y2)}" stroke="${stroke}"${tail}/>`;
}

/** A complete standalone document: white background, a title for screen readers, no external resources. */
export function svgDocument(width: number, height: number, title: string, body: string[]): string {
  const w = Math.ceil(width);
  const h = Math.ceil(height);
  return [
    `<?xml version="1.0" encoding="UTF-8"?>`,
    `<svg xmlns="http://www.w3.org/2000/svg" version="1.1" width="${w}" height="${h}" viewBox="0 0 ${w} ${h}" font-family="${FONT}">`,
    `<title>${escapeXml(title)}</title>`,
    `<rect x="0" y="0" width="${w}" height="${h}" fill="#ffffff"/>`,
    ...body,
    `</svg>`,
    "",
  ].join("\n");
}
