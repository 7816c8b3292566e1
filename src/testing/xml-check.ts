// A small well-formedness check for the SVG the report writes (no XML parser among the dependencies):
// one root, balanced tags, quoted attributes, no duplicate attribute, no stray "<" or "&".

const TAG = /<(\/?)([A-Za-z_][\w:.-]*)((?:\s+[A-Za-z_:][\w:.-]*="[^"<]*")*)\s*(\/?)>/y;
const ATTR = /([A-Za-z_:][\w:.-]*)="([^"<]*)"/g;
const ENTITY = /&(?!(?:amp|lt|gt|quot|apos|#\d+|#x[0-9a-fA-F]+);)/;

export interface XmlElement {
  name: string;
  attrs: Record<string, string>;
}

/** Problems found, empty when well-formed; `elements` lists every start tag in document order. */
export function checkXml(text: string): { problems: string[]; elements: XmlElement[] } {
  const problems: string[] = [];
  const elements: XmlElement[] = [];
  const open: string[] = [];
  let roots = 0;
  let i = 0;
  while (i < text.length) {
    const lt = text.indexOf("<", i);
    const chunk = text.slice(i, lt === -1 ? text.length : lt);
    if (ENTITY.test(chunk)) problems.push(`unescaped & near ${i}`);
    if (open.length === 0 && chunk.trim() !== "") problems.push(`text outside the root near ${i}`);
    if (lt === -1) break;
    if (text.startsWith("<?", lt)) {
      if (lt !== 0) problems.push("XML declaration not at the start");
      i = text.indexOf("?>", lt) + 2;
      continue;
    }
    if (text.startsWith("<!--", lt)) {
      i = text.indexOf("-->", lt) + 3;
      continue;
    }
    TAG.lastIndex = lt;
    const m = TAG.exec(text);
    if (!m) {
      problems.push(`malformed tag near ${lt}: ${text.slice(lt, lt + 40)}`);
      break;
    }
    const [, closing, name, rawAttrs, selfClosing] = m;
    if (closing) {
      const top = open.pop();
      if (top !== name) problems.push(`</${name}> closes <${top}>`);
    } else {
      if (open.length === 0) roots++;
      const attrs: Record<string, string> = {};
      for (const [, k, v] of (rawAttrs ?? "").matchAll(ATTR)) {
        if (k! in attrs) problems.push(`duplicate attribute ${k} on <${name}>`);
        if (ENTITY.test(v!)) problems.push(`unescaped & in ${k} on <${name}>`);
        attrs[k!] = v!;
      }
      elements.push({ name: name!, attrs });
      if (!selfClosing) open.push(name!);
    }
    i = TAG.lastIndex;
  }
  if (open.length > 0) problems.push(`unclosed: ${open.join(" > ")}`);
  if (roots !== 1) problems.push(`${roots} root elements`);
  return { problems, elements };
}
