# evalcore dashboard: one container serving the Streamlit app on port 8501.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1

WORKDIR /app
RUN useradd --create-home --uid 10001 evalcore

COPY requirements.txt ./
RUN python -m pip install -r requirements.txt

COPY .streamlit/ ./.streamlit/
COPY evalcore/ ./evalcore/
COPY pages/ ./pages/
COPY app.py ./

# The workspace (saved datasets and analyses) lives on a volume owned by the non-root user.
ENV EVALCORE_WORKSPACE=/data
RUN mkdir -p /data && chown evalcore:evalcore /data
VOLUME ["/data"]

# Images a log's image column names (the Label page): mount them read-only and point EVALCORE_MEDIA_DIR there, e.g.
#   docker run -v /srv/images:/media:ro -e EVALCORE_MEDIA_DIR=/media ...
# ENV EVALCORE_MEDIA_DIR=/media

USER evalcore
EXPOSE 8501

# python's urllib instead of curl: the slim image has no curl.
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(0 if urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status == 200 else 1)"]

# `streamlit run app.py` serves app.py behind evalcore's request guard (sign-in for uploads, downloads and metrics).
# EVALCORE_ALLOW_ANONYMOUS_CHANGES=1 lets anyone who reaches an instance without sign-in change saved items.
CMD ["streamlit", "run", "app.py", "--server.address=0.0.0.0", "--server.port=8501"]
