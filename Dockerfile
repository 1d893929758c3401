# syntax=docker/dockerfile:1
# Jackdaw server image: build with the .NET SDK, run on the ASP.NET Core runtime as the non-root
# `app` user that the official images define. Data lives in the /data volume.
#   docker build -t jackdaw --build-arg SOURCE_REVISION=$(git rev-parse HEAD) .
#   docker run -p 8080:8080 -v jackdaw-data:/data jackdaw

FROM mcr.microsoft.com/dotnet/sdk:10.0 AS build
WORKDIR /src
# Restore first, from the project files only, so the package layer is cached across source edits.
COPY global.json Directory.Build.props Directory.Packages.props .editorconfig ./
COPY storage/Jackdaw.Storage.csproj storage/
COPY server/Jackdaw.Server.csproj server/
RUN dotnet restore server/Jackdaw.Server.csproj
COPY storage/ storage/
COPY server/ server/
ARG SOURCE_REVISION=
RUN dotnet publish server/Jackdaw.Server.csproj -c Release -o /app --no-restore \
      -p:UseAppHost=false ${SOURCE_REVISION:+-p:SourceRevisionId=$SOURCE_REVISION}

FROM mcr.microsoft.com/dotnet/aspnet:10.0 AS runtime
WORKDIR /app
COPY --from=build /app .
RUN mkdir -p /data && chown "$APP_UID" /data
VOLUME /data
ENV JACKDAW_URLS=http://0.0.0.0:8080 \
    JACKDAW_DATADIR=/data \
    ASPNETCORE_HTTP_PORTS= \
    DOTNET_gcServer=1
EXPOSE 8080
USER $APP_UID
# The runtime image has no curl or wget: the server binary checks itself.
HEALTHCHECK --interval=30s --timeout=5s --start-period=15s --retries=3 \
  CMD ["dotnet", "/app/Jackdaw.Server.dll", "healthcheck", "http://127.0.0.1:8080/build/version"]
ENTRYPOINT ["dotnet", "/app/Jackdaw.Server.dll"]
