"""Which worker owns a host: a table in Redis with bounded loads.

Plain rendezvous hashing gives each host to its heaviest live worker, computed alone by every
worker; but on few hosts it is lopsided (three workers on six hosts can get 3, 3 and 0). Here a
host's owner is written once, on first sight, in the hash ``PREFIX:owners`` by a Lua script
(atomic, so every worker reads the same owner): the host goes to the first worker in its
rendezvous order (``sha1(worker NUL host)``, highest first) whose load is below
``ceil(1.25 * h / w)``, h the hosts in the table with this one and w the workers it is balanced
for (Mirrokni, Thorup and Zadimoghaddam's bound, 2018, on rendezvous hashing), and at most one
above the least loaded worker's load. The bound only grows with h while w stays, so a load within
it stays within it; and placed hosts leave no two loads more than 2 apart, so every worker has a
host once there are 2w - 1 (the bound alone allows 3, 3 and 0 on six hosts).

When the live workers change, one script rebalances (idempotent: the first worker to see the
change does it, the others find it done) and moves only what must move: the hosts of workers
that left, the hosts a joiner heads the rendezvous order of (what plain rendezvous hashing would
give it), and the least preferred hosts of workers above the new bound; each goes to its first
worker below the bound. After every script, no worker the table is balanced for holds more than
``ceil(1.25 * h / w)`` hosts. It bumps ``epoch`` in ``PREFIX:assignment``: workers drop the owners
they remember and hand hosts over as they do on any membership change.
"""

from __future__ import annotations

import redis

LUA_COMMON = """
local function bound(h, w) return math.floor((5 * h + 4 * w - 1) / (4 * w)) end
-- A (worker, host) pair's rendezvous weight, as membership.weight computes it in Python.
local function weight(m, host) return redis.sha1hex(m .. '\\0' .. host) end
local function split(text)
  local out = {}
  for m in string.gmatch(text or '', '[^\\n]+') do out[#out + 1] = m end
  return out
end
-- The worker first in host's rendezvous order whose load is below limit.
local function choose(host, members, loads, limit)
  local best, best_weight = nil, nil
  for _, m in ipairs(members) do
    if (loads[m] or 0) < limit then
      local w = weight(m, host)
      if not best or w > best_weight then best, best_weight = m, w end
    end
  end
  return best
end
-- Give host (or one whose owner old is gone) to a worker of members, bounded, and no worker
-- more than two above the least loaded; KEYS[1] owners, KEYS[2] loads.
local function place(host, members, old)
  local counts = redis.call('HMGET', KEYS[2], unpack(members))
  local loads = {}
  for i, m in ipairs(members) do loads[m] = tonumber(counts[i]) or 0 end
  local h = redis.call('HLEN', KEYS[1])
  if not old then h = h + 1 end
  local least = loads[members[1]]
  for _, m in ipairs(members) do least = math.min(least, loads[m]) end
  local owner = choose(host, members, loads, math.min(bound(h, #members), least + 2))
  redis.call('HSET', KEYS[1], host, owner)
  redis.call('HINCRBY', KEYS[2], owner, 1)
  if old then redis.call('HINCRBY', KEYS[2], old, -1) end
  return owner
end
-- The members the table is balanced for (given, before its first balance), as a list and a set.
local function balanced(given)
  local members, member = split(redis.call('HGET', KEYS[3], 'members')), {}
  if #members == 0 then members = given end
  for _, m in ipairs(members) do member[m] = true end
  return members, member
end
-- host's owner, placed now if it has none among the members (a table from before a rebalance).
local function owner_of(host, members, member)
  local owner = redis.call('HGET', KEYS[1], host)
  if owner and member[owner] then return owner end
  return place(host, members, owner)
end
"""

# KEYS: owners, loads, assignment. ARGV: how many members the caller sees, those members, then
# hosts. Returns each host's owner, placing the new ones among the members the table is balanced
# for (the caller's, before any rebalance).
ASSIGN = LUA_COMMON + """
local n = tonumber(ARGV[1])
local members, member = balanced({unpack(ARGV, 2, n + 1)})
local owners = {}
for i = n + 2, #ARGV do owners[#owners + 1] = owner_of(ARGV[i], members, member) end
return owners
"""

# KEYS: owners, loads, assignment. ARGV: the live workers, sorted. Returns {epoch, hosts moved}.
REBALANCE = LUA_COMMON + """
local live = ARGV
local joined = table.concat(live, '\\n')
local before = redis.call('HGET', KEYS[3], 'members') or ''
if before == joined then return {tonumber(redis.call('HGET', KEYS[3], 'epoch') or '0'), 0} end
local alive, joiners, joiner_list = {}, {}, {}
for _, m in ipairs(live) do alive[m] = true end
if before ~= '' then  -- the first balance of a table has no joiners: all are where they were
  local old = {}
  for _, m in ipairs(split(before)) do old[m] = true end
  for _, m in ipairs(live) do if not old[m] then joiners[m] = true joiner_list[#joiner_list + 1] = m end end
end
-- The joiner heading host's rendezvous order, if one does and it is not o; mostly 2 hashes a
-- host (the owner usually outweighs the joiner), the other members only when it does not.
local function won_by_joiner(host, o)
  local best, best_weight = o, weight(o, host)
  for _, j in ipairs(joiner_list) do
    local w = weight(j, host)
    if w > best_weight then best, best_weight = j, w end
  end
  if best == o then return nil end
  for _, m in ipairs(live) do
    if not joiners[m] and m ~= o and weight(m, host) > best_weight then return nil end
  end
  return best
end
local flat = redis.call('HGETALL', KEYS[1])
local hosts, owner = {}, {}
for i = 1, #flat, 2 do hosts[#hosts + 1] = flat[i] owner[flat[i]] = flat[i + 1] end
table.sort(hosts)
local limit = bound(#hosts, #live)
local loads = {}
for _, m in ipairs(live) do loads[m] = 0 end
for _, host in ipairs(hosts) do if alive[owner[host]] then loads[owner[host]] = loads[owner[host]] + 1 end end
local movers, moving = {}, {}
for _, host in ipairs(hosts) do
  local o = owner[host]
  local move = not alive[o]
  if not move and #joiner_list > 0 and won_by_joiner(host, o) then
    move = true
    loads[o] = loads[o] - 1
  end
  if move then movers[#movers + 1] = host moving[host] = true end
end
for _, m in ipairs(live) do
  if loads[m] > limit then  -- its least preferred hosts go first
    local mine = {}
    for _, host in ipairs(hosts) do
      if owner[host] == m and not moving[host] then mine[#mine + 1] = {weight(m, host), host} end
    end
    table.sort(mine, function(a, b) return a[1] < b[1] end)
    for i = 1, loads[m] - limit do movers[#movers + 1] = mine[i][2] moving[mine[i][2]] = true end
    loads[m] = limit
  end
end
table.sort(movers)
local moved = 0
for _, host in ipairs(movers) do
  local to = choose(host, live, loads, limit)
  loads[to] = loads[to] + 1
  if to ~= owner[host] then redis.call('HSET', KEYS[1], host, to) moved = moved + 1 end
end
redis.call('DEL', KEYS[2])
for m, count in pairs(loads) do if count > 0 then redis.call('HSET', KEYS[2], m, count) end end
redis.call('HSET', KEYS[3], 'members', joined)
return {redis.call('HINCRBY', KEYS[3], 'epoch', 1), moved}
"""


class HostTable:
    """The owners of hosts under ``prefix`` in Redis: :meth:`assign` on first sight,
    :meth:`rebalance` when the live workers change, :meth:`epoch` to notice that they did."""

    def __init__(self, client: redis.Redis, prefix: str):
        self.redis = client
        self.owners_key, self.loads_key, self.state_key = (f"{prefix}:{name}" for name in
                                                           ("owners", "loads", "assignment"))
        self._assign = client.register_script(ASSIGN)
        self._rebalance = client.register_script(REBALANCE)

    @property
    def keys(self) -> list[str]:
        return [self.owners_key, self.loads_key, self.state_key]

    def assign(self, hosts: list[str], members: list[str]) -> dict[str, str]:
        """Each host's owner, new hosts placed now (``members``: the live workers this worker
        sees, used only before the table's first balance)."""
        if not hosts:
            return {}
        found = self._assign(keys=self.keys, args=[len(members), *members, *hosts])
        return {host: owner.decode() for host, owner in zip(hosts, found)}

    def rebalance(self, live: list[str]) -> tuple[int, int]:
        """Balance the table for the ``live`` workers (no-op when it is): (epoch, hosts moved)."""
        epoch, moved = self._rebalance(keys=self.keys, args=sorted(live))
        return int(epoch), int(moved)

    def balanced_for(self, pipe: redis.client.Pipeline) -> None:
        """Queue in ``pipe`` the read of (members the table is balanced for, epoch)."""
        pipe.hmget(self.state_key, "members", "epoch")

    def table(self) -> dict[str, str]:
        """Every host and its owner, read as it stands."""
        return {host.decode(): owner.decode() for host, owner in self.redis.hgetall(self.owners_key).items()}
