// SGLang's approximate radix tree (sgl-model-gateway/src/tree.rs): the raw characters of every prompt a
// router sent, each node marked with the workers ("tenants") that were sent a prompt through it and when.
// `prefixMatch` walks the longest prefix of a text that is in the tree — into a node's edge, too — and
// names one tenant of the deepest node reached; `insert` adds a text under a tenant; `evictTenantsBySize`
// removes each tenant's least recently used leaves until its characters fit a bound.

interface Node {
  /** The edge's characters from the parent. */
  text: string;
  readonly children: Map<string, Node>;
  /** Tenant → last access (ms); insertion order is the order tenants reached the node. */
  readonly tenants: Map<string, number>;
  parent: Node | null;
}

function node(text: string, parent: Node | null): Node {
  return { text, children: new Map(), tenants: new Map(), parent };
}

function sharedPrefix(a: string, aFrom: number, b: string): number {
  const n = Math.min(a.length - aFrom, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(aFrom + i) === b.charCodeAt(i)) i++;
  return i;
}

export class CharRadixTree {
  private readonly root = node("", null);

  /** Adds `text` under `tenant` at `now`, splitting an edge where the text leaves it. */
  insert(text: string, tenant: string, now: number): void {
    let curr = this.root;
    curr.tenants.set(tenant, now);
    let i = 0;
    while (i < text.length) {
      const first = text[i]!;
      const child = curr.children.get(first);
      if (!child) {
        const leaf = node(text.slice(i), curr);
        leaf.tenants.set(tenant, now);
        curr.children.set(first, leaf);
        return;
      }
      const shared = sharedPrefix(text, i, child.text);
      if (shared < child.text.length) {
        // Split the edge: a new node holds the shared part and keeps the child's tenants.
        const mid = node(child.text.slice(0, shared), curr);
        for (const [t, at] of child.tenants) mid.tenants.set(t, at);
        child.text = child.text.slice(shared);
        child.parent = mid;
        mid.children.set(child.text[0]!, child);
        curr.children.set(first, mid);
        curr = mid;
      } else {
        curr = child;
      }
      curr.tenants.set(tenant, now);
      i += shared;
    }
  }

  /**
   * The longest prefix of `text` in the tree, in characters, and a tenant of the deepest node reached
   * (SGLang takes the first key of that node's map; here: the first tenant to have reached it), or null
   * when nothing matched. Refreshes that tenant's access time up to the root.
   */
  prefixMatch(text: string, now: number): { matched: number; tenant: string | null } {
    let curr = this.root;
    let i = 0;
    while (i < text.length) {
      const child = curr.children.get(text[i]!);
      if (!child) break;
      const shared = sharedPrefix(text, i, child.text);
      i += shared;
      curr = child;
      if (shared < child.text.length) break;
    }
    if (curr === this.root || i === 0) return { matched: 0, tenant: null };
    const tenant = curr.tenants.keys().next().value ?? null;
    if (tenant !== null) for (let n: Node | null = curr; n; n = n.parent) n.tenants.set(tenant, now);
    return { matched: i, tenant };
  }

  /** Forgets `tenant` everywhere (a worker that left). */
  removeTenant(tenant: string): void {
    const walk = (n: Node) => {
      n.tenants.delete(tenant);
      for (const [k, c] of [...n.children]) {
        walk(c);
        if (c.tenants.size === 0 && c.children.size === 0) n.children.delete(k);
      }
    };
    walk(this.root);
  }

  /** Characters each tenant holds (the sum of the edges of the nodes it reached). */
  sizes(): Map<string, number> {
    const out = new Map<string, number>();
    const stack = [...this.root.children.values()];
    while (stack.length > 0) {
      const n = stack.pop()!;
      for (const t of n.tenants.keys()) out.set(t, (out.get(t) ?? 0) + n.text.length);
      for (const c of n.children.values()) stack.push(c);
    }
    return out;
  }

  /**
   * For each tenant over `maxChars`, removes it from its least recently used leaves (a node where no child
   * has it) until it fits; nodes no tenant holds any more go.
   */
  evictTenantsBySize(maxChars: number): void {
    const sizes = this.sizes();
    for (const [tenant, size] of sizes) {
      let used = size;
      while (used > maxChars) {
        const leaf = this.oldestLeaf(tenant);
        if (!leaf) break;
        leaf.tenants.delete(tenant);
        used -= leaf.text.length;
        if (leaf.tenants.size === 0 && leaf.children.size === 0 && leaf.parent) {
          leaf.parent.children.delete(leaf.text[0]!);
        }
      }
    }
  }

  private oldestLeaf(tenant: string): Node | null {
    let best: Node | null = null;
    let bestAt = Number.POSITIVE_INFINITY;
    const stack = [...this.root.children.values()];
    while (stack.length > 0) {
      const n = stack.pop()!;
      const at = n.tenants.get(tenant);
      if (at === undefined) continue;
      let leaf = true;
      for (const c of n.children.values()) {
        if (c.tenants.has(tenant)) {
          leaf = false;
          stack.push(c);
        }
      }
      if (leaf && at < bestAt) {
        best = n;
        bestAt = at;
      }
    }
    return best;
  }
}
