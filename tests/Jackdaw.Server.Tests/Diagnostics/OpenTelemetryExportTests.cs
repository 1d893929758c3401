using System.Collections.Concurrent;
using System.IO.Compression;
using System.Net;
using System.Text;
using Jackdaw.Server.Tests.Infrastructure;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Tests.Diagnostics;

/// <summary>
/// The OTLP export, into a fake OTLP/HTTP receiver on 127.0.0.1 that keeps each POST's body. No
/// protobuf package is served here, so the bodies are checked for the UTF-8 strings they must carry
/// (protobuf writes strings as they are).
/// </summary>
public sealed class OpenTelemetryExportTests
{
    private static readonly TimeSpan Wait = TimeSpan.FromSeconds(60);

    [Fact]
    public async Task MetricsAndRequestSpansReachTheCollectorWithTheDatabaseAndIndex()
    {
        await using var receiver = await OtlpReceiver.StartAsync();
        await using var server = await InProcessServer.StartAsync("--OpenTelemetry:Endpoint", receiver.Url, "--OpenTelemetry:ExportInterval", "1");
        await using (await MetricsEndpointTests.ExerciseAsync(server.Client, "Traced"))
        {
            await Poll.UntilAsync(
                () => Task.FromResult(receiver.Received("/v1/metrics", "jackdaw.http.requests", "jackdaw.merger.commit.duration", "jackdaw.documents", "Traced")),
                Wait,
                "the metrics at /v1/metrics");
            await Poll.UntilAsync(
                () => Task.FromResult(receiver.Received("/v1/traces", "Jackdaw.Requests", "db.namespace", "Traced", "http.route", "/databases/*/docs")),
                Wait,
                "the request spans at /v1/traces: " + receiver.Dump("/v1/traces"));
            await Poll.UntilAsync(
                () => Task.FromResult(receiver.Received("/v1/traces", "jackdaw.index", "Auto/Orders/ByFreight", "POST /databases/*/queries")),
                Wait,
                "the query's span, with its index, at /v1/traces");
        }
        Assert.All(receiver.Paths, path => Assert.True(path is "/v1/metrics" or "/v1/traces", path));
    }

    [Fact]
    public async Task WithoutAnEndpointNoRequestSpanIsStarted()
    {
        await using var server = await InProcessServer.StartAsync();
        Assert.False(server.Host.Server.Metrics.Requests.HasListeners());
    }

    private sealed class OtlpReceiver : IAsyncDisposable
    {
        private readonly WebApplication _app;
        private readonly ConcurrentQueue<(string Path, byte[] Body)> _posts = new();

        private OtlpReceiver(WebApplication app) => _app = app;

        public string Url => _app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single();

        public IEnumerable<string> Paths => _posts.Select(p => p.Path).Distinct();

        public static async Task<OtlpReceiver> StartAsync()
        {
            var builder = WebApplication.CreateSlimBuilder();
            builder.WebHost.UseUrls("http://127.0.0.1:0");
            builder.Logging.ClearProviders();
            var app = builder.Build();
            var receiver = new OtlpReceiver(app);
            app.Run(async context =>
            {
                using var body = new MemoryStream();
                Stream source = context.Request.Headers.ContentEncoding == "gzip" ? new GZipStream(context.Request.Body, CompressionMode.Decompress) : context.Request.Body;
                await source.CopyToAsync(body);
                receiver._posts.Enqueue((context.Request.Path.Value ?? "", body.ToArray()));
                context.Response.StatusCode = StatusCodes.Status200OK;
                context.Response.ContentType = "application/x-protobuf";
            });
            await app.StartAsync();
            return receiver;
        }

        /// <summary>Whether one POST to <paramref name="path"/> held every one of <paramref name="strings"/>.</summary>
        public bool Received(string path, params string[] strings) =>
            _posts.Any(p => p.Path == path && strings.All(s => p.Body.AsSpan().IndexOf(Encoding.UTF8.GetBytes(s)) >= 0));

        public string Dump(string path) => string.Join("\n----\n", _posts.Where(p => p.Path == path).Select(p => new string(Encoding.UTF8.GetString(p.Body).Select(c => char.IsControl(c) ? '.' : c).ToArray())));

        public async ValueTask DisposeAsync()
        {
            await _app.StopAsync();
            await _app.DisposeAsync();
        }
    }
}
