using System.Collections.Concurrent;
using System.Net;
using Microsoft.AspNetCore.Builder;
using Microsoft.AspNetCore.Hosting;
using Microsoft.AspNetCore.Hosting.Server;
using Microsoft.AspNetCore.Hosting.Server.Features;
using Microsoft.AspNetCore.Http;
using Microsoft.Extensions.DependencyInjection;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Client.Tests.Infrastructure;

/// <summary>
/// One node of a test cluster: a small Kestrel app on 127.0.0.1 (port 0) in front of a real
/// Jackdaw server. It answers <c>GET /topology</c> with the cluster's topology and
/// <c>GET /databases/{db}/configuration/client</c> with its client configuration (as each node of
/// a RavenDB cluster does, adding <c>Refresh-Client-Configuration</c> to answers to a client
/// that holds another), and forwards every other request to its server, recording each; a test
/// turns it into a node that answers 503, one that breaks connections, a slow one, or one that
/// tells clients to refresh their topology, and stops it to refuse connections.
/// </summary>
public sealed class NodeProxy : IAsyncDisposable
{
    private static readonly HttpClient Forwarder = new(new SocketsHttpHandler { AllowAutoRedirect = false, UseCookies = false }) { Timeout = TimeSpan.FromMinutes(2) };
    private readonly string _target;
    private readonly Func<string> _topology;
    private readonly Func<(long Etag, string Json)> _clientConfiguration;
    private WebApplication? _app;

    private NodeProxy(string tag, string target, Func<string> topology, Func<(long Etag, string Json)> clientConfiguration)
    {
        Tag = tag;
        _target = target;
        _topology = topology;
        _clientConfiguration = clientConfiguration;
    }

    public enum Behaviour
    {
        /// <summary>Forward to the server.</summary>
        Forward,

        /// <summary>Answer 503 with a JSON error, as a node that cannot serve the database now.</summary>
        Unavailable,

        /// <summary>Close the connection without an answer, as a node that crashed mid-request.</summary>
        Reset,
    }

    public string Tag { get; }

    public string Url { get; private set; } = "";

    public Behaviour Mode { get; set; }

    /// <summary>Waited before forwarding a database request: a slow node.</summary>
    public TimeSpan Delay { get; set; }

    /// <summary>Add <c>Refresh-Topology: true</c> to forwarded answers, as a server whose topology changed.</summary>
    public bool SaysRefreshTopology { get; set; }

    public ConcurrentQueue<ProxiedRequest> Requests { get; } = new();

    /// <summary>Requests for the database's documents, queries and saves (not topologies nor health checks).</summary>
    public int DocumentRequests => Requests.Count(r => r.PathAndQuery.Contains("/docs", StringComparison.Ordinal) || r.PathAndQuery.Contains("/bulk_docs", StringComparison.Ordinal) || r.PathAndQuery.Contains("/queries", StringComparison.Ordinal));

    public static async Task<NodeProxy> StartAsync(string tag, string target, Func<string> topology, Func<(long Etag, string Json)> clientConfiguration)
    {
        var proxy = new NodeProxy(tag, target, topology, clientConfiguration);
        await proxy.StartAsync();
        return proxy;
    }

    private async Task StartAsync()
    {
        var builder = WebApplication.CreateSlimBuilder();
        builder.Logging.ClearProviders();
        builder.WebHost.UseUrls("http://127.0.0.1:0");
        var app = builder.Build();
        app.Run(HandleAsync);
        await app.StartAsync();
        Url = app.Services.GetRequiredService<IServer>().Features.Get<IServerAddressesFeature>()!.Addresses.Single().TrimEnd('/');
        _app = app;
    }

    /// <summary>Stops listening: connections to <see cref="Url"/> are refused.</summary>
    public async Task StopAsync()
    {
        if (_app is { } app)
        {
            _app = null;
            await app.StopAsync();
            await app.DisposeAsync();
        }
    }

    private async Task HandleAsync(HttpContext context)
    {
        var request = context.Request;
        var pathAndQuery = request.Path + request.QueryString;
        var clientConfigurationEtag = request.Headers["Client-Configuration-Etag"].ToString();
        Requests.Enqueue(new ProxiedRequest(request.Method, pathAndQuery, request.Headers["Topology-Etag"].ToString(), clientConfigurationEtag));
        if (request.Path == "/topology")
        {
            context.Response.ContentType = "application/json";
            await context.Response.WriteAsync(_topology());
            return;
        }

        var (configurationEtag, configuration) = _clientConfiguration();
        if (request.Path.Value!.EndsWith("/configuration/client", StringComparison.Ordinal))
        {
            context.Response.ContentType = "application/json";
            await context.Response.WriteAsync(configuration);
            return;
        }

        switch (Mode)
        {
            case Behaviour.Reset:
                context.Abort();
                return;
            case Behaviour.Unavailable:
                context.Response.StatusCode = (int)HttpStatusCode.ServiceUnavailable;
                context.Response.ContentType = "application/json";
                await context.Response.WriteAsync("{\"Type\":\"ServiceUnavailableException\",\"Message\":\"Node " + Tag + " cannot serve the database now.\"}");
                return;
        }

        if (Delay > TimeSpan.Zero && request.Path.StartsWithSegments("/databases"))
        {
            await Task.Delay(Delay, context.RequestAborted);
        }

        using var forwarded = new HttpRequestMessage(new HttpMethod(request.Method), _target + pathAndQuery);
        if (request.ContentLength > 0 || request.Headers.TransferEncoding.Count > 0)
        {
            forwarded.Content = new StreamContent(request.Body);
        }

        foreach (var (name, values) in request.Headers)
        {
            if (name.Equals("Host", StringComparison.OrdinalIgnoreCase))
            {
                continue;
            }

            if (!forwarded.Headers.TryAddWithoutValidation(name, (IEnumerable<string?>)values))
            {
                forwarded.Content?.Headers.TryAddWithoutValidation(name, (IEnumerable<string?>)values);
            }
        }

        using var answer = await Forwarder.SendAsync(forwarded, HttpCompletionOption.ResponseHeadersRead, context.RequestAborted);
        context.Response.StatusCode = (int)answer.StatusCode;
        foreach (var (name, values) in answer.Headers.Concat(answer.Content.Headers))
        {
            if (!name.Equals("Transfer-Encoding", StringComparison.OrdinalIgnoreCase))
            {
                context.Response.Headers[name] = values.ToArray();
            }
        }

        if (SaysRefreshTopology)
        {
            context.Response.Headers["Refresh-Topology"] = "true";
        }

        if (clientConfigurationEtag.Length > 0 && clientConfigurationEtag.Trim('"') != configurationEtag.ToString(System.Globalization.CultureInfo.InvariantCulture))
        {
            context.Response.Headers["Refresh-Client-Configuration"] = "true";
        }

        await answer.Content.CopyToAsync(context.Response.Body, context.RequestAborted);
    }

    public ValueTask DisposeAsync() => new(StopAsync());
}
