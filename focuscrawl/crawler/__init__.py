"""The crawl loop, one module per role: :mod:`engine <focuscrawl.crawler.engine>` (the
run: its loop, commits, control), :mod:`scheduler <focuscrawl.crawler.scheduler>`
(takes and puts back: the one writer of the states of URLs taken), :mod:`window
<focuscrawl.crawler.window>` (the fetches under way, ordered or as-completed),
:mod:`policies <focuscrawl.crawler.policies>` and :mod:`rounds
<focuscrawl.crawler.rounds>` (when a fetch list is taken), :mod:`budget
<focuscrawl.crawler.budget>`, :mod:`recorder <focuscrawl.crawler.recorder>` (a
result into records) with :mod:`links <focuscrawl.crawler.links>`, and :mod:`run
<focuscrawl.crawler.run>` (the run directory and its resume state).

(``crawler``, not ``crawl``: ``focuscrawl.crawl`` is the public front door's function.)
"""
