# syntax=docker/dockerfile:1
# Jackdaw server image: build with the .NET SDK, run on the ASP.NET Core runtime as the non-root
# `app` user that the official images define. Data lives in the /data volume.
#   docker build -t jackdaw --build-arg SOURCE_REVISION=$(git rev-parse HEAD) .
#   docker run -p 8080:8080 -v jackdaw-data:/data jackdaw

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
RUN mkdir -p /data && chown "$APP_UID" /data
VOLUME /data
ENV JACKDAW_URLS=http://0.0.0.0:8080 \
    JACKDAW_SECURITY__UNSECUREDACCESSALLOWED=PublicNetwork \
    JACKDAW_DATADIR=/data \
    ASPNETCORE_HTTP_PORTS= \
    DOTNET_gcServer=1
EXPOSE 8080
USER $APP_UID
# The runtime image has no curl or wget: the server binary checks itself.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["dotnet", "/app/Jackdaw.Server.dll", "healthcheck", "http://127.0.0.1:8080/build/version"]
ENTRYPOINT ["dotnet", "/app/Jackdaw.Server.dll"]
