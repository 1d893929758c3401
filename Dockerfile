# syntax=docker/dockerfile:1
# Jackdaw server image: build with the .NET SDK, run on the ASP.NET Core runtime as the non-root
# `app` user that the official images define. Data lives in the /data volume. It listens on 0.0.0.0
# (it must, inside a container) and is secured by default: HTTPS on 8443 with the server certificate
# mounted read-only at /certs (README, "Security"; the key readable by the app user, UID 1654).
#   docker build -t jackdaw --build-arg SOURCE_REVISION=$(git rev-parse HEAD) .
#   docker run -p 8443:8443 -v "$PWD/certs:/certs:ro" -v jackdaw-data:/data jackdaw
# Unsecured, say so and publish the port on the host's loopback only (docker-compose.yml's
# jackdaw-unsecured service does the same):
#   docker run -p 127.0.0.1:8080:8080 -v jackdaw-data:/data -e JACKDAW_URLS=http://0.0.0.0:8080 \
#     -e JACKDAW_SECURITY__CERTIFICATE__PATH= -e JACKDAW_SECURITY__CERTIFICATE__KEYPATH= \
#     -e JACKDAW_SECURITY__UNSECUREDACCESSALLOWED=PublicNetwork jackdaw

FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
# The platform being built for (BuildKit sets it: amd64, arm64), as the official samples use it.
ARG TARGETARCH
WORKDIR /src
# Restore first, from the project files only, so the package layer is cached across source edits.
COPY global.json Directory.Build.props Directory.Packages.props .editorconfig ./
COPY storage/Jackdaw.Storage.csproj storage/
COPY server/Jackdaw.Server.csproj server/
RUN dotnet restore server/Jackdaw.Server.csproj -a $TARGETARCH
COPY storage/ storage/
COPY server/ server/
ARG SOURCE_REVISION=
# ReadyToRun: the server and its libraries (Lucene.Net, Jint) precompiled, so that a fresh
# container does its first minute of work without waiting for the JIT (perf/RESULTS.md,
# 2026-11-26 01:25: bulk insert +35%, index builds +13-20%; warmed, the same).
RUN dotnet publish server/Jackdaw.Server.csproj -c Release -a $TARGETARCH --self-contained false -o /app --no-restore \
      -p:UseAppHost=false -p:PublishReadyToRun=true ${SOURCE_REVISION:+-p:SourceRevisionId=$SOURCE_REVISION}

FROM mcr.microsoft.com/dotnet/aspnet:10.0 AS runtime
WORKDIR /app
COPY --from=build /app .
# /backups: where backup tasks write (LocalSettings.FolderPath), a volume of its own so that a
# backup outlives the data volume; mount it from another disk.
RUN mkdir -p /data /backups && chown "$APP_UID" /data /backups
VOLUME /data /backups
# ASPNETCORE_HTTP_PORTS is the official images' default listener (8080, plain http): cleared, so
# that JACKDAW_URLS alone says where the server listens. Nothing here allows unsecured access from
# other machines: a container without the certificate stops at once, naming the missing file.
ENV JACKDAW_URLS=https://0.0.0.0:8443 \
    JACKDAW_SECURITY__CERTIFICATE__PATH=/certs/server.crt \
    JACKDAW_SECURITY__CERTIFICATE__KEYPATH=/certs/server.key \
    JACKDAW_DATADIR=/data \
    ASPNETCORE_HTTP_PORTS= \
    DOTNET_gcServer=1
# 8443: secured (the default); 8080: the unsecured variant above.
EXPOSE 8443 8080
USER $APP_UID
# The runtime image has no curl or wget: the server binary checks itself, on the first address of
# JACKDAW_URLS (0.0.0.0 read as 127.0.0.1), so the same check serves both variants; on https to
# loopback it takes the server's own certificate unchecked (the check sends nothing secret).
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["dotnet", "/app/Jackdaw.Server.dll", "healthcheck"]
ENTRYPOINT ["dotnet", "/app/Jackdaw.Server.dll"]
