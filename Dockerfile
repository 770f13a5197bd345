# The service image: the locked runtime dependencies only.
FROM python:3.11-slim
ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 UV_PROJECT_ENVIRONMENT=/app/.venv
WORKDIR /app
RUN pip install --no-cache-dir 'uv==0.13.9'
COPY pyproject.toml uv.lock README.md ./
COPY src ./src
RUN uv sync --frozen --no-dev
ENV PATH=/app/.venv/bin:$PATH LEADMAIL_HOST=0.0.0.0 LEADMAIL_LOG_FORMAT=json
EXPOSE 8000
USER nobody
CMD ["leadmail", "serve"]
