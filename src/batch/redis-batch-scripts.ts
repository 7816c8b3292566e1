// The Redis batch store's server-side scripts for the lines of a job: claim, renew, finish, retry or
// defer, release. Each is one atomic step for every replica on the server, so no line is handed to two
// owners and a result is recorded once. Times are the callers' (`now`, epoch ms), never Redis's clock.
// The scripts derive the keys they touch from the prefix in ARGV[1] (the layout is in
// redis-batch-keys.ts), so they suit a standalone Redis or one primary, not a cluster.

/** Helpers every batch script starts with; mirrors the key layout of redis-batch-keys.ts. */
export const LIB = `
local P = ARGV[1]
local FINAL = { failed = true, completed = true, expired = true, cancelled = true }
local COLUMNS = { 'cid', 'body', 'state', 'att', 'own', 'lease', 'nb', 'res', 'fin', 'nums', 'ready', 'later', 'run' }
local function bk(id) return P .. 'b:' .. id end
local function ok_key(owner) return P .. 'o:' .. owner end
local function open_count(b)
  return redis.call('ZCARD', b .. ':ready') + redis.call('ZCARD', b .. ':later') + redis.call('ZCARD', b .. ':run')
end
local function unqueue(b, line)
  redis.call('ZREM', b .. ':ready', line)
  redis.call('ZREM', b .. ':later', line)
  redis.call('ZREM', b .. ':run', line)
end
local function owned(b, line, owner)
  return redis.call('HGET', b .. ':state', line) == 'running' and redis.call('HGET', b .. ':own', line) == owner
end
local function sealed(b) return redis.call('HEXISTS', b, 'fin_owner') == 1 end
local function unclaim(b, bid, line)
  local owner = redis.call('HGET', b .. ':own', line)
  if owner then redis.call('SREM', ok_key(owner), bid .. '|' .. line) end
  redis.call('HDEL', b .. ':own', line)
  redis.call('HDEL', b .. ':lease', line)
end
local function ids_by_seq(found)
  table.sort(found, function(x, y) return x[1] < y[1] end)
  local ids = {}
  for i, f in ipairs(found) do ids[i] = f[2] end
  return ids
end
`;

/**
 * ARGV: prefix, owner, n, lease until (ms), now (ms), now (s). Active batches (in_progress) oldest
 * first, within their window; in each, lines due (pending past `not_before`, running past its lease)
 * moved to the ready set, then claimed from it in line order. Returns 8 strings per line: batch id,
 * line, custom_id, body, attempts, tenant, endpoint, metadata ('' for none).
 */
export const CLAIM_SCRIPT = `${LIB}
local owner, n, untilMs = ARGV[2], tonumber(ARGV[3]), ARGV[4]
local now, nowS = tonumber(ARGV[5]), tonumber(ARGV[6])
local out, got = {}, 0

local function promote(b, from, max)
  local due = redis.call('ZRANGEBYSCORE', b .. from, '-inf', max)
  for _, line in ipairs(due) do redis.call('ZADD', b .. ':ready', tonumber(line), line) end
  if #due > 0 then redis.call('ZREMRANGEBYSCORE', b .. from, '-inf', max) end
end

-- A line in the ready set that is not due at this now (a replica's clock behind another's) goes back.
local function take(b, bid, line, m)
  local state = redis.call('HGET', b .. ':state', line)
  if state == 'pending' then
    local nb = redis.call('HGET', b .. ':nb', line) or '0'
    if tonumber(nb) > now then
      redis.call('ZREM', b .. ':ready', line)
      redis.call('ZADD', b .. ':later', nb, line)
      return
    end
  elseif state == 'running' then
    local lease = redis.call('HGET', b .. ':lease', line) or '0'
    if tonumber(lease) >= now then
      redis.call('ZREM', b .. ':ready', line)
      redis.call('ZADD', b .. ':run', lease, line)
      return
    end
    unclaim(b, bid, line)
  else
    redis.call('ZREM', b .. ':ready', line)
    return
  end
  redis.call('HSET', b .. ':state', line, 'running')
  redis.call('HSET', b .. ':own', line, owner)
  redis.call('HSET', b .. ':lease', line, untilMs)
  local att = redis.call('HINCRBY', b .. ':att', line, 1)
  redis.call('ZREM', b .. ':ready', line)
  redis.call('ZADD', b .. ':run', untilMs, line)
  redis.call('SADD', ok_key(owner), bid .. '|' .. line)
  local cid = redis.call('HGET', b .. ':cid', line)
  local body = redis.call('HGET', b .. ':body', line)
  for _, v in ipairs({ bid, line, cid, body, tostring(att), m[3], m[4], m[5] or '' }) do out[#out + 1] = v end
  got = got + 1
end

for _, bid in ipairs(redis.call('ZRANGE', P .. 'active', 0, -1)) do
  if got >= n then break end
  local b = bk(bid)
  local m = redis.call('HMGET', b, 'status', 'expires_at', 'tenant', 'endpoint', 'metadata')
  if m[1] == 'in_progress' and tonumber(m[2]) > nowS and not sealed(b) then
    promote(b, ':later', now)
    promote(b, ':run', '(' .. now)
    while got < n do
      local cand = redis.call('ZRANGE', b .. ':ready', 0, n - got - 1)
      if #cand == 0 then break end
      for _, line in ipairs(cand) do take(b, bid, line, m) end
    end
  end
end
return out
`;

/** ARGV: prefix, owner, lease until (ms), then batch id and line pairs. Returns the pairs lost. */
export const RENEW_SCRIPT = `${LIB}
local owner, untilMs = ARGV[2], ARGV[3]
local lost = {}
for i = 4, #ARGV, 2 do
  local bid, line = ARGV[i], ARGV[i + 1]
  local b = bk(bid)
  if owned(b, line, owner) and not sealed(b) then
    redis.call('HSET', b .. ':lease', line, untilMs)
    redis.call('ZREM', b .. ':ready', line)
    redis.call('ZADD', b .. ':run', untilMs, line)
  else
    lost[#lost + 1] = bid
    lost[#lost + 1] = line
  end
end
return lost
`;

/**
 * ARGV: prefix, owner, batch id, line, state (succeeded | failed), result JSON, now (ms). 1 when
 * recorded; 0 when the line is not the owner's running line or its batch is being finalized.
 */
export const FINISH_SCRIPT = `${LIB}
local owner, bid, line, state = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local b = bk(bid)
if not owned(b, line, owner) or sealed(b) then return 0 end
redis.call('HSET', b .. ':state', line, state)
redis.call('HSET', b .. ':res', line, ARGV[6])
redis.call('HSET', b .. ':fin', line, ARGV[7])
unclaim(b, bid, line)
unqueue(b, line)
redis.call('HINCRBY', b, state == 'succeeded' and 'request_completed' or 'request_failed', 1)
return 1
`;

/**
 * ARGV: prefix, owner, batch id, line, not before (ms), give the attempt back (1 | 0). The owner's
 * running line back to pending; 1 when it was the owner's.
 */
export const RETRY_SCRIPT = `${LIB}
local owner, bid, line, nb = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local b = bk(bid)
if not owned(b, line, owner) or sealed(b) then return 0 end
redis.call('HSET', b .. ':state', line, 'pending')
redis.call('HSET', b .. ':nb', line, nb)
unclaim(b, bid, line)
unqueue(b, line)
redis.call('ZADD', b .. ':later', nb, line)
if ARGV[6] == '1' then
  local att = tonumber(redis.call('HGET', b .. ':att', line) or '0')
  redis.call('HSET', b .. ':att', line, math.max(att - 1, 0))
end
return 1
`;

/** ARGV: prefix, owner. Its running lines back to pending, attempts given back; how many. */
export const RELEASE_SCRIPT = `${LIB}
local owner = ARGV[2]
local n = 0
for _, m in ipairs(redis.call('SMEMBERS', ok_key(owner))) do
  local sep = string.find(m, '|', 1, true)
  local bid, line = string.sub(m, 1, sep - 1), string.sub(m, sep + 1)
  local b = bk(bid)
  if owned(b, line, owner) and not sealed(b) then
    redis.call('HSET', b .. ':state', line, 'pending')
    redis.call('HDEL', b .. ':own', line)
    redis.call('HDEL', b .. ':lease', line)
    unqueue(b, line)
    redis.call('ZADD', b .. ':later', redis.call('HGET', b .. ':nb', line) or '0', line)
    local att = tonumber(redis.call('HGET', b .. ':att', line) or '0')
    redis.call('HSET', b .. ':att', line, math.max(att - 1, 0))
    n = n + 1
  end
end
redis.call('DEL', ok_key(owner))
return n
`;
