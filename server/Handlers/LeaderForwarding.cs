using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// A change of the cluster's state that reaches a member that does not lead is passed on to the
/// leader as it came (method, path, query, body) and the leader's answer is given back, as RavenDB
/// does for its Raft commands. On a secured server this node authorized the caller for the route
/// already, and passes the request on with its own certificate (<see cref="Cluster.ClusterNode.LeaderClient"/>).
/// When no leader is known, or it does not answer, the answer is a 503 that names the leader. A
/// request passed on once is never passed on again (the header below), so two nodes that each think
/// the other leads cannot bounce it.
/// </summary>
internal static class LeaderForwarding
{
    private const string ForwardedHeader = "Jackdaw-Forwarded-By";

    /// <summary>
    /// Set by the leader on the answer of a change that each node applies to its own databases (an
    /// index): the state's etag with the change. The member that passed the request on answers once
    /// it applied the state up to it itself.
    /// </summary>
    public const string AppliedEtagHeader = "Jackdaw-Cluster-Etag";

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
        using var request = new HttpRequestMessage(new HttpMethod(context.Request.Method), leaderUrl + context.Request.Path + context.Request.QueryString);
        request.Headers.Add(ForwardedHeader, cluster.NodeTag);
        if (body is not null || context.Request.ContentLength is > 0 || context.Request.Headers.TransferEncoding.Count > 0)
        {
            request.Content = body is not null ? new ByteArrayContent(body) : new StreamContent(context.Request.Body);
            if (context.Request.ContentType is { } type)
            {
                request.Content.Headers.TryAddWithoutValidation("Content-Type", type);
            }
        }
        HttpResponseMessage response;
        try
        {
            response = await cluster.LeaderClient.SendAsync(request, HttpCompletionOption.ResponseHeadersRead, context.RequestAborted).ConfigureAwait(false);
        }
        catch (HttpRequestException e)
        {
            throw new NotLeaderException($"Node {cluster.NodeTag} does not lead the cluster, and the leader at {leaderUrl} did not answer ({e.Message}); retry shortly.");
        }
        using (response)
        {
            // Answers of cluster changes are small: read whole, so that the hook can look at them.
            var answer = await response.Content.ReadAsByteArrayAsync(context.RequestAborted).ConfigureAwait(false);
            if (response.Headers.TryGetValues(AppliedEtagHeader, out var etags)
                && long.TryParse(etags.FirstOrDefault(), System.Globalization.NumberStyles.None, System.Globalization.CultureInfo.InvariantCulture, out var etag))
            {
                await cluster.WaitForLocalAsync(etag, context.RequestAborted).ConfigureAwait(false);
                context.Response.Headers[AppliedEtagHeader] = etag.ToString(System.Globalization.CultureInfo.InvariantCulture);
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
            await context.Response.Body.WriteAsync(answer, context.RequestAborted).ConfigureAwait(false);
        }
        return true;
    }
}
