using System.Globalization;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// A change of the cluster's state that reaches a member that does not lead is passed on to the
/// leader as it came (method, path, query, body) and the leader's answer is given back, as RavenDB
/// does for its Raft commands. On a secured server this node authorized the caller for the route
/// already, and passes the request on with its own certificate (<see cref="Cluster.ClusterNode.LeaderClient"/>).
/// When the leader known takes no connection (it died), the request waits for the election and goes
/// to the new leader (this node's own URL, if it won). When no leader is known, or it does not
/// answer, the answer is a 503 that names the leader. A
/// request passed on once is never passed on again (the header below), so two nodes that each think
/// the other leads cannot bounce it.
/// </summary>
internal static class LeaderForwarding
{
    private const string ForwardedHeader = "Jackdaw-Forwarded-By";

    /// <summary>How long a member waits for a new leader when the one it knew does not take a connection.</summary>
    private static readonly TimeSpan ElectionWait = TimeSpan.FromSeconds(10);

    /// <summary>
    /// Set by the leader on the answer of a change that each node applies to its own databases (an
    /// index): the state's etag with the change. The member that passed the request on answers once
    /// it applied the state up to it itself.
    /// </summary>
    public const string AppliedEtagHeader = "Jackdaw-Cluster-Etag";

    /// <summary>
    /// Waits until this node applied the state up to <paramref name="etag"/> (a change each node
    /// applies to its own databases), and says the etag to a member that passed the request on (it
    /// waits for it too, <see cref="AppliedEtagHeader"/>).
    /// </summary>
    public static async ValueTask AnswerAppliedAsync(RequestContext context, long etag)
    {
        await context.Server.Cluster.WaitForLocalAsync(etag, context.RequestAborted).ConfigureAwait(false);
        context.Response.Headers[AppliedEtagHeader] = etag.ToString(CultureInfo.InvariantCulture);
    }

    /// <summary>True when another node passed this request on to this one (it must not be passed on again).</summary>
    public static bool WasPassedOn(RequestContext context) => context.Request.Headers.ContainsKey(ForwardedHeader);

    /// <summary>Marks a request this node passes on to another, so that it is not passed on again.</summary>
    public static void MarkPassedOn(HttpRequestMessage request, string nodeTag) => request.Headers.Add(ForwardedHeader, nodeTag);

    /// <summary>The id RavenDB's clients send with a Raft command (<c>raft-request-id</c>), or a new one.</summary>
    public static string CommandId(RequestContext context) =>
        new UrlQuery(context.Request.QueryString.Value).GetString("raft-request-id") is { Length: > 0 } id
            ? id
            : Cluster.ClusterCommand.NewId();

    /// <summary>True (and the request answered by the leader) when this member does not lead; false when it is for this node to do.</summary>
    /// <param name="beforeAnswering">Runs with the leader's status and body before they are given back (a create waits for this node's copy).</param>
    /// <param name="body">The request's body when this node read it already (to check it before passing it on).</param>
    public static async ValueTask<bool> ForwardedAsync(RequestContext context, Func<int, byte[], CancellationToken, ValueTask>? beforeAnswering = null, byte[]? body = null)
    {
        var cluster = context.Server.Cluster;
        if (!cluster.IsClustered || cluster.IsLeader)
        {
            return false;
        }
        if (context.Request.Headers.ContainsKey(ForwardedHeader) || context.IsInnerRequest
            || await cluster.WaitForLeaderAsync(TimeSpan.FromSeconds(5), context.RequestAborted).ConfigureAwait(false) is not var (_, leaderUrl))
        {
            throw cluster.NotLeader();
        }
        if (cluster.IsLeader)
        {
            return false;
        }
        // Read whole (cluster changes are small): it may have to be sent to a second leader.
        var content = body;
        if (content is null && (context.Request.ContentLength is > 0 || context.Request.Headers.TransferEncoding.Count > 0))
        {
            using var buffer = new MemoryStream();
            await context.Request.Body.CopyToAsync(buffer, context.RequestAborted).ConfigureAwait(false);
            content = buffer.ToArray();
        }
        // One command id for every attempt (RavenDB's raft-request-id): a request sent again to a
        // second leader is applied once even if the first one did commit it before it stepped down.
        var query = context.Request.QueryString.Value ?? "";
        if (new UrlQuery(query).GetString("raft-request-id") is not { Length: > 0 })
        {
            query += (query.Length == 0 ? "?" : "&") + "raft-request-id=" + Uri.EscapeDataString(Cluster.ClusterCommand.NewId());
        }
        HttpResponseMessage response;
        var deadline = DateTime.UtcNow + ElectionWait;
        while (true)
        {
            using var request = new HttpRequestMessage(new HttpMethod(context.Request.Method), leaderUrl + context.Request.Path + query);
            request.Headers.Add(ForwardedHeader, cluster.NodeTag);
            if (content is not null)
            {
                request.Content = new ByteArrayContent(content);
                if (context.Request.ContentType is { } type)
                {
                    request.Content.Headers.TryAddWithoutValidation("Content-Type", type);
                }
            }
            try
            {
                response = await cluster.LeaderClient.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, context.RequestAborted).ConfigureAwait(false);
                if (!await SteppedDownAsync(response, context.RequestAborted).ConfigureAwait(false) || DateTime.UtcNow >= deadline)
                {
                    break;
                }
                // It stepped down between this node's look and the request (an election under
                // load): as when it does not answer, wait for the next leader and send it there.
                response.Dispose();
                if (await cluster.WaitForAnotherLeaderAsync(leaderUrl, deadline - DateTime.UtcNow, context.RequestAborted).ConfigureAwait(false) is not var (_, elected))
                {
                    throw new NotLeaderException($"Node {cluster.NodeTag} does not lead the cluster, the node at {leaderUrl} stepped down, and no other was elected in {ElectionWait.TotalSeconds:0} s; retry shortly.");
                }
                leaderUrl = elected;
                continue;
            }
            catch (HttpRequestException e) when (e.HttpRequestError == HttpRequestError.ConnectionError && DateTime.UtcNow < deadline)
            {
                // The leader is gone (no connection: nothing was sent). As RavenDB's members do,
                // wait for the election that replaces it and pass the request on to the new one.
                if (await cluster.WaitForAnotherLeaderAsync(leaderUrl, deadline - DateTime.UtcNow, context.RequestAborted).ConfigureAwait(false) is not var (_, next))
                {
                    throw new NotLeaderException($"Node {cluster.NodeTag} does not lead the cluster, the leader at {leaderUrl} did not answer ({e.Message}), and no other was elected in {ElectionWait.TotalSeconds:0} s; retry shortly.");
                }
                // This node, if it won: the request comes back to it as passed on, and it does it.
                leaderUrl = next;
            }
            catch (Exception e) when (e is HttpRequestException || e is OperationCanceledException && !context.RequestAborted.IsCancellationRequested)
            {
                throw LeaderDidNotAnswer(cluster, leaderUrl, e);
            }
        }
        using (response)
        {
            // Answers of cluster changes are small: read whole, so that the hook can look at them.
            byte[] answer;
            try
            {
                answer = await response.Content.ReadAsByteArrayAsync(context.RequestAborted).ConfigureAwait(false);
            }
            catch (Exception e) when (e is HttpRequestException or IOException || e is OperationCanceledException && !context.RequestAborted.IsCancellationRequested)
            {
                throw LeaderDidNotAnswer(cluster, leaderUrl, e);
            }
            if (response.Headers.TryGetValues(AppliedEtagHeader, out var etags)
                && long.TryParse(etags.FirstOrDefault(), NumberStyles.None, CultureInfo.InvariantCulture, out var etag))
            {
                await cluster.WaitForLocalAsync(etag, context.RequestAborted).ConfigureAwait(false);
            }
            if (beforeAnswering is not null)
            {
                await beforeAnswering((int)response.StatusCode, answer, context.RequestAborted).ConfigureAwait(false);
            }
            context.Response.StatusCode = (int)response.StatusCode;
            if (response.Content.Headers.ContentType is { } contentType)
            {
                context.Response.ContentType = contentType.ToString();
            }
            // The leader's own headers go back too (Database-Missing tells RavenDB's clients a 503
            // is a missing database, not a node down), but not those of the hop itself.
            foreach (var (name, values) in response.Headers)
            {
                if (!HopHeaders.Contains(name))
                {
                    context.Response.Headers[name] = values.ToArray();
                }
            }
            await context.Response.Body.WriteAsync(answer, context.RequestAborted).ConfigureAwait(false);
        }
        return true;
    }

    /// <summary>Whether the node a request was passed on to answered that it does not lead (503 <c>NotLeaderException</c>); its body stays readable.</summary>
    private static async Task<bool> SteppedDownAsync(HttpResponseMessage response, CancellationToken token)
    {
        if (response.StatusCode != System.Net.HttpStatusCode.ServiceUnavailable)
        {
            return false;
        }
        await response.Content.LoadIntoBufferAsync(token).ConfigureAwait(false);
        var body = await response.Content.ReadAsStringAsync(token).ConfigureAwait(false);
        return body.Contains("\"Type\":\"NotLeaderException\"", StringComparison.Ordinal);
    }

    private static readonly HashSet<string> HopHeaders = new(StringComparer.OrdinalIgnoreCase)
    {
        "Connection", "Keep-Alive", "Transfer-Encoding", "Upgrade", "Proxy-Authenticate", "Trailer", "Date", "Server",
    };

    private static NotLeaderException LeaderDidNotAnswer(Cluster.ClusterNode cluster, string leaderUrl, Exception e) =>
        new($"Node {cluster.NodeTag} does not lead the cluster, and the leader at {leaderUrl} did not answer ({e.Message}); retry shortly.");
}
