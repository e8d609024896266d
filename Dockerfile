# focuscrawl as a service: `focuscrawl serve` on port 8321 over the runs in /runs.
# Off loopback the server needs a token: docker run -e FOCUSCRAWL_TOKEN=... (16+ characters).
FROM python:3.11-slim

# the distribution's Chromium (the UI's tests), its old headless shell (JavaScript pages:
# fetch.render) and redis-server (shared crawls): the packages .ci/run installs
RUN apt-get update \
    && apt-get install -y --no-install-recommends chromium chromium-headless-shell redis-server \
    && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY pyproject.toml README.md ./
COPY focuscrawl ./focuscrawl
RUN pip install --no-cache-dir ".[export,serve]"

RUN useradd --create-home --uid 10001 focuscrawl \
    && mkdir /runs && chown focuscrawl:focuscrawl /runs
USER focuscrawl
VOLUME ["/runs"]
EXPOSE 8321
ENTRYPOINT ["focuscrawl"]
CMD ["serve", "/runs", "--host", "0.0.0.0", "--port", "8321"]
