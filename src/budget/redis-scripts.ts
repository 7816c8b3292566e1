// The Redis budget store's server-side scripts: each admission and each settlement is one atomic round
// trip. A tenant's keys share the hash tag `{tenant}`; the scripts also touch keys they derive from a
// prefix (a reservation's record, another day's counters), so they suit a standalone Redis or one
// primary, not a cluster with the tenant's keys on several shards.
//
// Keys, for tenant T:  tg:b:{T}:slots       sorted set: reservation id → when its lease ends (ms)
//                      tg:b:{T}:day:<day>   hash: in, out (settled), rin, rout (reserved)
//                      tg:b:{T}:res:<id>    hash: day, in, out (what the reservation holds)

/** Frees reservations whose lease ended (their replica died holding them): spent as reserved. */
const REAP = `
local function reap(slots, now, resPrefix, dayPrefix)
  local dead = redis.call('ZRANGEBYSCORE', slots, '-inf', now)
  for _, rid in ipairs(dead) do
    local r = redis.call('HMGET', resPrefix .. rid, 'day', 'in', 'out')
    if r[1] then
      local dh = dayPrefix .. r[1]
      redis.call('HINCRBY', dh, 'rin', -tonumber(r[2]))
      redis.call('HINCRBY', dh, 'rout', -tonumber(r[3]))
      redis.call('HINCRBY', dh, 'in', tonumber(r[2]))
      redis.call('HINCRBY', dh, 'out', tonumber(r[3]))
      redis.call('DEL', resPrefix .. rid)
    end
    redis.call('ZREM', slots, rid)
  end
end
`;

/**
 * KEYS: slots, day hash. ARGV: now, lease ms, id, input, output, concurrency limit, daily input limit,
 * daily output limit (-1: none), day, reservation prefix, day prefix, day-hash TTL s.
 * Returns {1} when admitted, else {0, in flight, in, out, rin, rout} — the counters it was refused on.
 */
export const ADMIT_SCRIPT = `${REAP}
local slots, dayh = KEYS[1], KEYS[2]
local now, lease = tonumber(ARGV[1]), tonumber(ARGV[2])
local id, input, output = ARGV[3], tonumber(ARGV[4]), tonumber(ARGV[5])
local limC, limI, limO = tonumber(ARGV[6]), tonumber(ARGV[7]), tonumber(ARGV[8])
reap(slots, now, ARGV[10], ARGV[11])
local inflight = redis.call('ZCARD', slots)
local c = redis.call('HMGET', dayh, 'in', 'out', 'rin', 'rout')
local ci, co = tonumber(c[1] or '0'), tonumber(c[2] or '0')
local ri, ro = tonumber(c[3] or '0'), tonumber(c[4] or '0')
if (limC >= 0 and inflight >= limC) or (limI >= 0 and ci + ri + input > limI)
    or (limO >= 0 and co + ro + output > limO) then
  return {0, inflight, ci, co, ri, ro}
end
redis.call('ZADD', slots, now + lease, id)
redis.call('HINCRBY', dayh, 'rin', input)
redis.call('HINCRBY', dayh, 'rout', output)
redis.call('EXPIRE', dayh, tonumber(ARGV[12]))
redis.call('HSET', ARGV[10] .. id, 'day', ARGV[9], 'in', input, 'out', output)
redis.call('EXPIRE', ARGV[10] .. id, tonumber(ARGV[12]))
return {1}
`;

/**
 * KEYS: slots, the reservation's record. ARGV: id, actual input, actual output (-1: unknown, the
 * reservation counts), day prefix. Returns 1 when settled, 0 when it was settled already.
 */
export const SETTLE_SCRIPT = `
local r = redis.call('HMGET', KEYS[2], 'day', 'in', 'out')
redis.call('ZREM', KEYS[1], ARGV[1])
if not r[1] then return 0 end
local dh = ARGV[4] .. r[1]
local i, o = tonumber(ARGV[2]), tonumber(ARGV[3])
if i < 0 then i = tonumber(r[2]) end
if o < 0 then o = tonumber(r[3]) end
redis.call('HINCRBY', dh, 'rin', -tonumber(r[2]))
redis.call('HINCRBY', dh, 'rout', -tonumber(r[3]))
redis.call('HINCRBY', dh, 'in', i)
redis.call('HINCRBY', dh, 'out', o)
redis.call('DEL', KEYS[2])
return 1
`;

/** A tenant's key prefix, with its hash tag. */
export function tenantPrefix(namespace: string, tenant: string): string {
  return `${namespace}:{${tenant}}:`;
}
