# agent-memory: the service only. Point DATABASE_URL at a PostgreSQL with pgvector
# (see docker-compose.yml); the embedded server is for machines without Docker.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1
WORKDIR /srv/agent-memory

COPY pyproject.toml README.md alembic.ini ./
COPY app ./app
COPY client ./client
COPY migrations ./migrations
RUN pip install ./client -e .

RUN useradd --system --uid 10001 agent && chown -R agent /srv/agent-memory
USER agent

# Re-quantize the embedding model at build time, so that no container pays for it at start.
ENV AGENT_MEMORY_CACHE_DIR=/srv/agent-memory/cache
RUN python -c "from app.embeddings.model_files import local_model_path as p; print(p())"

EXPOSE 8080
# Migrate, then serve. HOST=0.0.0.0 because the container's network is the boundary.
ENV HOST=0.0.0.0 PORT=8080
CMD ["agent-memory", "serve", "--migrate"]
