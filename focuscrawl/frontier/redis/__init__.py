"""The shared store: a :class:`~focuscrawl.frontier.base.FrontierStore` on Redis, by concept.

* :mod:`~focuscrawl.frontier.redis.keys`: the namespace's key layout (the one place that spells it);
* :mod:`~focuscrawl.frontier.redis.connection`: the server's URL, the password, the
  client, and every Redis error translated once into one line;
* :mod:`~focuscrawl.frontier.redis.namespace`: the open namespace the roles share
  (partitions, the script's calls, discovery numbers, columns and layers, rows);
* :mod:`~focuscrawl.frontier.redis.rows`: a row, written by the client and by the
  script's row library (Lua);
* :mod:`~focuscrawl.frontier.redis.script`: the frontier's Lua script and its operations;
* :mod:`~focuscrawl.frontier.redis.order`: what's next, the partitions' queues merged;
* the roles: :mod:`~focuscrawl.frontier.redis.queue`, :mod:`~focuscrawl.frontier.redis.columns`,
  :mod:`~focuscrawl.frontier.redis.graph`, :mod:`~focuscrawl.frontier.redis.journal`;
* :mod:`~focuscrawl.frontier.redis.store`: :class:`RedisFrontier`, the roles composed.

The workers that share a store (leases, outbox, claims, handover) are :mod:`focuscrawl.workers`.

Nothing is re-exported here: importing a module of the package (the key layout, say)
imports no Redis client.
"""
