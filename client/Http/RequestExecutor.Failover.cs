using System.Collections.Concurrent;
using System.Net;
using System.Net.Http.Headers;
using System.Net.WebSockets;
using System.Text.Json;

namespace Jackdaw.Client.Http;

/// <summary>The failover loops: a server-wide request over the store's URLs, a database's over its topology's nodes.</summary>
internal sealed partial class RequestExecutor
{
    /// <summary>
    /// A server-wide request: to the URL that last answered, then each other URL the store knows
    /// (its own and every node a topology named) while none accepts a connection. Only then: a
    /// server-wide request is not one database's (creating a database, say), the URLs may name one
    /// server twice, and a request that was sent (a connection broken after it, a timeout) may have
    /// been applied, so it is not sent again.
    /// </summary>
    private async Task<HttpResponseMessage> SendToServerAsync(Attempt attempt, CancellationToken token)
    {
        var urls = Volatile.Read(ref _serverUrls);
        var first = Math.Min(Volatile.Read(ref _preferredServerUrl), urls.Length - 1);
        JackdawException? lastFailure = null;
        for (var i = 0; i < urls.Length; i++)
        {
            var index = (first + i) % urls.Length;
            var (response, failure) = await TrySendOnceAsync(urls[index], attempt, null, token).ConfigureAwait(false);
            if (response is null)
            {
                if (!NothingWasSent(failure!))
                {
                    throw failure!;
                }

                lastFailure = failure;
                continue;
            }

            if (index != first)
            {
                Volatile.Write(ref _preferredServerUrl, index);
            }

            if (response.IsSuccessStatusCode)
            {
                return response;
            }

            using (response)
            {
                throw await CreateErrorAsync(response, attempt.Method, attempt.PathAndQuery, token).ConfigureAwait(false);
            }
        }

        if (urls.Length == 1)
        {
            throw lastFailure!;
        }

        throw new AllTopologyNodesDownException(
            $"{attempt.Method} {attempt.PathAndQuery} reached none of the Jackdaw servers at {string.Join(", ", urls)}; the last said: {lastFailure!.Message}",
            lastFailure);
    }

    /// <summary>
    /// A database's request: to the node chosen for it, then, while nodes are down, to the next
    /// node the topology prefers (each node once). RavenDB's clients retry every request so,
    /// writes included: a write whose connection broke after it was sent may have been applied by
    /// the first node and is applied again by the next (a put of the same document is the same
    /// document; a put that leaves the id to the server makes a second one).
    /// </summary>
    private async Task<HttpResponseMessage> SendToDatabaseAsync(DatabaseNodes nodes, Attempt attempt, SessionInfo? session, CancellationToken token)
    {
        if (attempt.Spent)
        {
            // A second SaveChangesAsync after a failed one, say: nothing was sent this time.
            throw new InvalidOperationException($"{attempt.Method} {attempt.PathAndQuery} was not sent: {SpentBodyExplanation}.");
        }

        var selector = await nodes.GetSelectorAsync(token).ConfigureAwait(false);
        var isRead = session is not null && IsRead(attempt);
        var balance = nodes.ReadBalanceBehavior;
        var node = Choose(selector, isRead).Node;
        // During a speed test, the first attempt of a read is a race of every node.
        var raced = isRead && balance == ReadBalanceBehavior.FastestNode && selector.InSpeedTestPhase
            && selector.Topology.Nodes.Count > 1 && attempt.Completion == HttpCompletionOption.ResponseContentRead
            ? RaceAsync(nodes, selector, node, attempt, token)
            : null;
        List<(ServerNode Node, JackdawException Error)>? failures = null;
        while (true)
        {
            var (response, failure) = await (raced ?? TrySendOnceAsync(node.Url, attempt, nodes, token)).ConfigureAwait(false);
            raced = null;
            if (response is not null)
            {
                if (!IsNodeDown(response.StatusCode))
                {
                    selector.Restore(node);
                    if (failures is not null)
                    {
                        // The topology may say where the database went.
                        nodes.RefreshInBackground(null);
                    }
                    else if (Says(response, RefreshTopologyHeaderName))
                    {
                        nodes.RefreshInBackground(node);
                    }

                    if (Says(response, RefreshClientConfigurationHeaderName))
                    {
                        nodes.RefreshClientConfigurationInBackground(node);
                    }

                    if (response.IsSuccessStatusCode)
                    {
                        return response;
                    }

                    using (response)
                    {
                        throw await CreateErrorAsync(response, attempt.Method, attempt.PathAndQuery, token).ConfigureAwait(false);
                    }
                }

                using (response)
                {
                    failure = await CreateErrorAsync(response, attempt.Method, attempt.PathAndQuery, token).ConfigureAwait(false);
                }
            }

            (failures ??= []).Add((node, failure!));
            nodes.OnFailed(selector, node);
            selector = nodes.Selector ?? selector;
            var failed = node;
            node = Choose(selector, isRead).Node;
            if (failures.Exists(f => string.Equals(f.Node.Url, node.Url, StringComparison.OrdinalIgnoreCase)))
            {
                nodes.RefreshInBackground(null);
                throw GiveUp(nodes, attempt, failures);
            }

            if (attempt.Spent)
            {
                // There is another node to try, but not the body to send it.
                nodes.RefreshInBackground(null);
                throw NotResent(failure!, failed);
            }
        }

        (int Index, ServerNode Node) Choose(NodeSelector current, bool read) =>
            !read ? current.GetPreferredNode() : balance switch
            {
                ReadBalanceBehavior.RoundRobin => current.GetNodeBySessionId(session!.SessionId),
                ReadBalanceBehavior.FastestNode => current.GetFastestNode(),
                _ => current.GetPreferredNode(),
            };
    }

    /// <summary>
    /// What the store does when a database's request failed on every node it tried: one node's
    /// failure is thrown as it is; when every node answered (a missing database, say), the last
    /// answer; otherwise <see cref="AllTopologyNodesDownException"/> with each node's failure.
    /// </summary>
    private static JackdawException GiveUp(DatabaseNodes nodes, Attempt attempt, List<(ServerNode Node, JackdawException Error)> failures)
    {
        if (failures.Count == 1 || failures.TrueForAll(f => f.Error is not ServerUnavailableException))
        {
            return failures[^1].Error;
        }

        var detail = string.Join("; ", failures.Select(f => $"{f.Node.ClusterTag} at {f.Node.Url}: {f.Error.Message}"));
        return new AllTopologyNodesDownException(
            $"{attempt.Method} {attempt.PathAndQuery} failed on every node of database '{nodes.Database}' it was tried on ({detail}).",
            failures[^1].Error);
    }

    /// <summary>The failure of a request that cannot be sent to another node, saying why it was not.</summary>
    private static JackdawException NotResent(JackdawException failure, ServerNode node)
    {
        var message = $"{failure.Message} The request was not sent to another node than {node.ClusterTag} at {node.Url}: {SpentBodyExplanation}.";
        return failure is ServerUnavailableException
            ? new ServerUnavailableException(message, failure)
            : new JackdawException(message, failure.StatusCode, failure.ServerErrorType, failure);
    }
}
