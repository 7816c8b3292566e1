// The Redis batch store's server-side scripts for files and for a job's life: a file's metadata written
// last over its pieces, a job created `validating` under a writer's lease and its lines written in
// pieces, flipped to `in_progress`, cancelled, expired, failed when its writer died, and finalized
// (seal, close its unrun lines in pages, commit its files and final status) under a finalizer's lease.
// Keys come from the prefix in ARGV[1] (redis-batch-keys.ts): a standalone Redis or one primary only.

import { LIB } from "./redis-batch-scripts.js";

/** A file's metadata over pieces already written (with a TTL): the pieces kept, the file listed. */
const FILE_LIB = `
local function commit_file(f)
  local fk = P .. 'f:' .. f.id
  local pieces = tonumber(f.pieces)
  for i = 0, pieces - 1 do
    if redis.call('EXISTS', fk .. ':' .. i) == 0 then return false end
  end
  for i = 0, pieces - 1 do redis.call('PERSIST', fk .. ':' .. i) end
  local seq = redis.call('INCR', P .. 'seq')
  redis.call('HSET', fk, 'id', f.id, 'tenant', f.tenant, 'purpose', f.purpose, 'filename', f.filename,
    'bytes', f.bytes, 'created_at', f.created_at, 'pieces', f.pieces, 'seq', seq)
  redis.call('ZADD', P .. 'tf:' .. f.tenant, seq, f.id)
  redis.call('ZADD', P .. 'tfp:' .. f.purpose .. ':' .. f.tenant, seq, f.id)
  return true
end
`;

/** ARGV: prefix, file JSON {id, tenant, purpose, filename, bytes, created_at, pieces}. 0: a piece expired. */
export const FILE_COMMIT_SCRIPT = `${LIB}${FILE_LIB}
return commit_file(cjson.decode(ARGV[2])) and 1 or 0
`;

/** ARGV: prefix, file id, tenant. 1 when the tenant's file was there (it and its pieces deleted). */
export const FILE_DELETE_SCRIPT = `${LIB}
local fk = P .. 'f:' .. ARGV[2]
local m = redis.call('HMGET', fk, 'tenant', 'purpose', 'pieces')
if m[1] ~= ARGV[3] then return 0 end
for i = 0, tonumber(m[3]) - 1 do redis.call('UNLINK', fk .. ':' .. i) end
redis.call('DEL', fk)
redis.call('ZREM', P .. 'tf:' .. m[1], ARGV[2])
redis.call('ZREM', P .. 'tfp:' .. m[2] .. ':' .. m[1], ARGV[2])
return 1
`;

/**
 * ARGV: prefix, batch id, writer token ('' for a failed batch), writer lease until (ms), then the
 * batch's field/value pairs. Writes the batch and lists it; a `validating` one is also watched for its
 * writer's lease and its window. Returns its sequence number.
 */
export const BATCH_CREATE_SCRIPT = `${LIB}
local id, token = ARGV[2], ARGV[3]
local b = bk(id)
local seq = redis.call('INCR', P .. 'seq')
redis.call('HSET', b, 'seq', seq, unpack(ARGV, 5))
local m = redis.call('HMGET', b, 'tenant', 'expires_at')
redis.call('ZADD', P .. 'tb:' .. m[1], seq, id)
if token ~= '' then
  redis.call('HSET', b, 'writer', token, 'writer_until', ARGV[4])
  redis.call('ZADD', P .. 'creating', ARGV[4], id)
  redis.call('ZADD', P .. 'expiry', m[2], id)
end
return seq
`;

/**
 * ARGV: prefix, batch id, writer token, writer lease until (ms), then line, custom_id, body triples.
 * Writes one piece of a job's lines, pending, and extends the writer's lease; 0 when the job is no
 * longer this writer's (its creation was declared interrupted).
 */
export const LINES_WRITE_SCRIPT = `${LIB}
local id, token = ARGV[2], ARGV[3]
local b = bk(id)
if redis.call('HGET', b, 'writer') ~= token then return 0 end
for i = 5, #ARGV, 3 do
  local line = ARGV[i]
  redis.call('HSET', b .. ':cid', line, ARGV[i + 1])
  redis.call('HSET', b .. ':body', line, ARGV[i + 2])
  redis.call('HSET', b .. ':state', line, 'pending')
  redis.call('ZADD', b .. ':nums', line, line)
  redis.call('ZADD', b .. ':ready', line, line)
end
redis.call('HSET', b, 'writer_until', ARGV[4])
redis.call('ZADD', P .. 'creating', ARGV[4], id)
return 1
`;

/**
 * ARGV: prefix, batch id, writer token, now (s), line count. Every line written: the writer's lease
 * ends and a `validating` job becomes `in_progress` and claimable (one cancelled or expired meanwhile
 * keeps its status, and is finalized). 0 when the job is no longer this writer's.
 */
export const BATCH_OPEN_SCRIPT = `${LIB}
local id, token = ARGV[2], ARGV[3]
local b = bk(id)
if redis.call('HGET', b, 'writer') ~= token then return 0 end
redis.call('HDEL', b, 'writer', 'writer_until')
redis.call('ZREM', P .. 'creating', id)
redis.call('HSET', b, 'request_total', ARGV[5])
if redis.call('HGET', b, 'status') == 'validating' then
  redis.call('HSET', b, 'status', 'in_progress', 'in_progress_at', ARGV[4])
  redis.call('ZADD', P .. 'active', redis.call('HGET', b, 'seq'), id)
end
return 1
`;

/** ARGV: prefix, batch id, writer token. A creation that failed part-way: the batch and its lines go. */
export const BATCH_DROP_SCRIPT = `${LIB}
local id = ARGV[2]
local b = bk(id)
if redis.call('HGET', b, 'writer') ~= ARGV[3] then return 0 end
for _, c in ipairs(COLUMNS) do redis.call('UNLINK', b .. ':' .. c) end
redis.call('ZREM', P .. 'tb:' .. redis.call('HGET', b, 'tenant'), id)
for _, set in ipairs({ 'creating', 'active', 'expiry', 'ending' }) do redis.call('ZREM', P .. set, id) end
redis.call('DEL', b)
return 1
`;

/** ARGV: prefix, batch id, tenant, now (s). 0 when it is not the tenant's batch. */
export const CANCEL_SCRIPT = `${LIB}
local id = ARGV[2]
local b = bk(id)
local m = redis.call('HMGET', b, 'tenant', 'status', 'seq')
if m[1] ~= ARGV[3] then return 0 end
if m[2] == 'in_progress' or m[2] == 'validating' then
  redis.call('HSET', b, 'status', 'cancelling', 'cancelling_at', ARGV[4])
  redis.call('ZREM', P .. 'active', id)
  redis.call('ZREM', P .. 'expiry', id)
  redis.call('ZADD', P .. 'ending', m[3], id)
end
return 1
`;

/** ARGV: prefix, now (s). Jobs past their window with lines to run go to `finalizing`; their ids. */
export const EXPIRE_SCRIPT = `${LIB}
local nowS = ARGV[2]
local found = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'expiry', '-inf', nowS)) do
  local b = bk(id)
  local m = redis.call('HMGET', b, 'status', 'seq')
  if m[1] == 'validating' or (m[1] == 'in_progress' and open_count(b) > 0) then
    redis.call('HSET', b, 'status', 'finalizing', 'finalizing_at', nowS, 'expired_at', nowS)
    redis.call('ZREM', P .. 'active', id)
    redis.call('ZREM', P .. 'expiry', id)
    redis.call('ZADD', P .. 'ending', m[2], id)
    found[#found + 1] = { tonumber(m[2]), id }
  elseif m[1] ~= 'in_progress' then
    redis.call('ZREM', P .. 'expiry', id)
  end
end
return ids_by_seq(found)
`;

/**
 * ARGV: prefix, now (ms), now (s), errors JSON. Jobs whose writer's lease ran out before every line
 * was written are failed (`batch_creation_interrupted`) and their partial lines removed; their ids.
 */
export const INTERRUPTED_SCRIPT = `${LIB}
local now = tonumber(ARGV[2])
local found = {}
for _, id in ipairs(redis.call('ZRANGEBYSCORE', P .. 'creating', '-inf', '(' .. ARGV[2])) do
  local b = bk(id)
  local m = redis.call('HMGET', b, 'status', 'writer_until', 'seq')
  redis.call('ZREM', P .. 'creating', id)
  if m[1] and not FINAL[m[1]] and m[2] and tonumber(m[2]) < now then
    redis.call('HSET', b, 'status', 'failed', 'failed_at', ARGV[3], 'errors', ARGV[4],
      'request_total', 0, 'request_completed', 0, 'request_failed', 0)
    redis.call('HDEL', b, 'writer', 'writer_until')
    for _, c in ipairs(COLUMNS) do redis.call('UNLINK', b .. ':' .. c) end
    for _, set in ipairs({ 'active', 'expiry', 'ending' }) do redis.call('ZREM', P .. set, id) end
    found[#found + 1] = { tonumber(m[3]), id }
  end
end
return ids_by_seq(found)
`;

/**
 * ARGV: prefix, now (ms). The jobs to finalize, oldest first: in_progress with no line open, and
 * cancelling or finalizing ones with no line running under a live lease nor a live finalizer.
 */
export const READY_SCRIPT = `${LIB}
local now = tonumber(ARGV[2])
local found = {}
local active = redis.call('ZRANGE', P .. 'active', 0, -1, 'WITHSCORES')
for i = 1, #active, 2 do
  local b = bk(active[i])
  if open_count(b) == 0 and redis.call('HEXISTS', b, 'writer') == 0 then
    found[#found + 1] = { tonumber(active[i + 1]), active[i] }
  end
end
local ending = redis.call('ZRANGE', P .. 'ending', 0, -1, 'WITHSCORES')
for i = 1, #ending, 2 do
  local b = bk(ending[i])
  local m = redis.call('HMGET', b, 'writer', 'fin_until')
  if not m[1] and (not m[2] or tonumber(m[2]) < now) and redis.call('ZCOUNT', b .. ':run', now, '+inf') == 0 then
    found[#found + 1] = { tonumber(ending[i + 1]), ending[i] }
  end
end
return ids_by_seq(found)
`;

/**
 * ARGV: prefix, batch id, finalizer token, now (ms), now (s), finalizer lease until (ms). Checks the
 * job is done and takes the finalizer's lease (from then on no line of it changes but by the
 * finalizer); a job done running goes to `finalizing`. Returns {'sealed', ending} (completed, cancelled
 * or expired), or {'wait'} / {'busy'} / {'final'} / {'gone'}.
 */
export const SEAL_SCRIPT = `${LIB}
local id, token, now = ARGV[2], ARGV[3], tonumber(ARGV[4])
local b = bk(id)
local m = redis.call('HMGET', b, 'status', 'expired_at', 'writer', 'fin_until', 'seq')
local status = m[1]
if not status then return { 'gone' } end
if FINAL[status] then return { 'final' } end
if m[3] or (m[4] and tonumber(m[4]) >= now) then return { 'busy' } end
local ending
if status == 'in_progress' then
  if open_count(b) > 0 then return { 'wait' } end
  redis.call('HSET', b, 'status', 'finalizing', 'finalizing_at', ARGV[5])
  redis.call('ZREM', P .. 'active', id)
  redis.call('ZREM', P .. 'expiry', id)
  redis.call('ZADD', P .. 'ending', m[5], id)
  ending = 'completed'
elseif status == 'cancelling' or status == 'finalizing' then
  if redis.call('ZCOUNT', b .. ':run', now, '+inf') > 0 then return { 'wait' } end
  ending = status == 'cancelling' and 'cancelled' or (m[2] and 'expired' or 'completed')
else
  return { 'wait' }
end
redis.call('HSET', b, 'fin_owner', token, 'fin_until', ARGV[6])
return { 'sealed', ending }
`;

/**
 * ARGV: prefix, batch id, finalizer token, now (ms), code, message, how many. Closes up to that many
 * of the job's open lines with their `code` record (id derived from the batch and line, so a finalizer
 * taking over writes the same). Returns the open lines left, or -1 when the lease is not this one's.
 */
export const CLOSE_SCRIPT = `${LIB}
local id, token = ARGV[2], ARGV[3]
local b = bk(id)
if redis.call('HGET', b, 'fin_owner') ~= token then return -1 end
local tail = ',"response":null,"error":{"code":' .. cjson.encode(ARGV[5]) .. ',"message":' .. cjson.encode(ARGV[6]) .. '}}'
local left = tonumber(ARGV[7])
for _, set in ipairs({ ':ready', ':later', ':run' }) do
  while left > 0 do
    local lines = redis.call('ZRANGE', b .. set, 0, left - 1)
    if #lines == 0 then break end
    for _, line in ipairs(lines) do
      local rid = 'batch_req_' .. string.sub(redis.sha1hex(id .. '|' .. line), 1, 32)
      local cid = redis.call('HGET', b .. ':cid', line)
      local record = '{"id":"' .. rid .. '","custom_id":' .. cjson.encode(cid) .. tail
      unclaim(b, id, line)
      redis.call('HSET', b .. ':state', line, 'closed')
      redis.call('HSET', b .. ':res', line, record)
      redis.call('HSET', b .. ':fin', line, ARGV[4])
      redis.call('ZREM', b .. set, line)
      left = left - 1
    end
  end
end
return open_count(b)
`;

/** ARGV: prefix, batch id, finalizer token, lease until (ms). 1 when the lease is still this one's. */
export const FIN_RENEW_SCRIPT = `${LIB}
local b = bk(ARGV[2])
if redis.call('HGET', b, 'fin_owner') ~= ARGV[3] then return 0 end
redis.call('HSET', b, 'fin_until', ARGV[4])
return 1
`;

/**
 * ARGV: prefix, batch id, finalizer token, final status, now (s), files JSON (the output file, then
 * the error file if any). In one step, only while the lease is this finalizer's: the files' metadata,
 * the batch's file ids, status and timestamps. 1 when committed.
 */
export const COMMIT_SCRIPT = `${LIB}${FILE_LIB}
local id, token, status, nowS = ARGV[2], ARGV[3], ARGV[4], ARGV[5]
local b = bk(id)
if redis.call('HGET', b, 'fin_owner') ~= token then return 0 end
local files = cjson.decode(ARGV[6])
for _, f in ipairs(files) do
  for i = 0, tonumber(f.pieces) - 1 do
    if redis.call('EXISTS', P .. 'f:' .. f.id .. ':' .. i) == 0 then return 0 end
  end
end
for _, f in ipairs(files) do commit_file(f) end
local m = redis.call('HMGET', b, 'finalizing_at', 'expired_at')
redis.call('HSET', b, 'status', status, 'finalizing_at', m[1] or nowS, 'output_file_id', files[1].id)
if files[2] then redis.call('HSET', b, 'error_file_id', files[2].id) end
if status == 'completed' then redis.call('HSET', b, 'completed_at', nowS) end
if status == 'cancelled' then redis.call('HSET', b, 'cancelled_at', nowS) end
if status == 'expired' then redis.call('HSET', b, 'expired_at', m[2] or nowS) end
redis.call('HDEL', b, 'fin_owner', 'fin_until')
for _, set in ipairs({ 'active', 'expiry', 'ending' }) do redis.call('ZREM', P .. set, id) end
return 1
`;
