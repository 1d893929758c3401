using System.Security.Cryptography;
using System.Security.Cryptography.X509Certificates;
using System.Text.Json;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Keeps the nodes' recorded certificates (<see cref="ClusterState.NodeCertificates"/>) true when a
/// node's certificate is replaced (a renewal: every few months with a public CA), since only
/// recorded ones may speak Raft's protocol. Every <see cref="CertificateCheckEvery"/> the leader of a
/// secured cluster looks at the certificate each member presents and commits the thumbprint of one
/// that changed or was never recorded (a cluster formed before they were kept)
/// (<see cref="ClusterCommandKind.PutMember"/> with the same tag and URL), then its own. When the
/// members refuse its own new one (they do not know it yet), it steps down, and the next leader
/// records it.
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>How often the leader looks at the members' certificates.</summary>
    public static TimeSpan CertificateCheckEvery { get; set; } = TimeSpan.FromSeconds(10);

    private Task _watchingCertificates = Task.CompletedTask;

    private async Task WatchNodeCertificatesAsync(CancellationToken token)
    {
        while (!token.IsCancellationRequested)
        {
            try
            {
                await Task.Delay(CertificateCheckEvery, token).ConfigureAwait(false);
                if (!IsLeader || _http.Certificate is not { } current || ThumbprintOf(current) is not { } own)
                {
                    continue;
                }
                var state = State;
                foreach (var (tag, url) in state.Members)
                {
                    if (tag == NodeTag)
                    {
                        continue;
                    }
                    var presented = await PresentedThumbprintAsync(url, token).ConfigureAwait(false);
                    if (presented is null || string.Equals(state.NodeCertificates.GetValueOrDefault(tag), presented, StringComparison.OrdinalIgnoreCase))
                    {
                        continue;
                    }
                    await ExecuteAsync(new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.PutMember) { Tag = tag, Url = url, Thumbprint = presented }, token).ConfigureAwait(false);
                    LogNodeCertificateRecorded(_logger, tag, presented);
                }
                if (!string.Equals(state.NodeCertificates.GetValueOrDefault(NodeTag), own, StringComparison.OrdinalIgnoreCase))
                {
                    await RecordOwnCertificateAsync(own, token).ConfigureAwait(false);
                }
            }
            catch (OperationCanceledException) when (token.IsCancellationRequested)
            {
                return;
            }
            catch (Exception e) when (e is not OutOfMemoryException)
            {
                LogCertificateCheckFailed(_logger, e.Message);
            }
        }
    }

    /// <summary>
    /// Commits this leader's new thumbprint; when the members refuse its requests (they do not know
    /// the new certificate), steps down so that another leader records it.
    /// </summary>
    private async Task RecordOwnCertificateAsync(string own, CancellationToken token)
    {
        using var timeout = CancellationTokenSource.CreateLinkedTokenSource(token);
        timeout.CancelAfter(TimeSpan.FromSeconds(5));
        try
        {
            await ExecuteAsync(new ClusterCommand(ClusterCommand.NewId(), ClusterCommandKind.PutMember) { Tag = NodeTag, Url = Url, Thumbprint = own }, timeout.Token).ConfigureAwait(false);
            LogNodeCertificateRecorded(_logger, NodeTag, own);
        }
        catch (Exception e) when (e is not OutOfMemoryException && !token.IsCancellationRequested)
        {
            LogOwnCertificateChanged(_logger, NodeTag);
            await _raft!.Cluster.ResignAsync(token).ConfigureAwait(false);
        }
    }

    /// <summary>
    /// Whether <paramref name="certificate"/> (a ClusterAdmin's, checked by the caller) may speak
    /// Raft's protocol to this node on a secured cluster: a member admits its own certificate (nodes
    /// that share one) and the members' and nodes being added's recorded in the state
    /// (<see cref="ClusterState.NodeCertificates"/>). A node not yet a member admits the leader adding
    /// it, as does a cluster that recorded none (formed before they were kept).
    /// </summary>
    public bool AdmitsToConsensus(X509Certificate2? certificate)
    {
        var state = State;
        if (!IsMember || state.Members.Keys.Any(tag => !state.NodeCertificates.ContainsKey(tag)))
        {
            // Enforced once every member's is known (the leader records those a cluster formed
            // before they were kept lacks, ClusterNode.NodeCertificates.cs).
            return true;
        }
        if (certificate is null)
        {
            return false;
        }
        var thumbprint = certificate.Thumbprint;
        return (_http.Certificate is { } own && ThumbprintOf(own) is { } ownThumbprint && string.Equals(ownThumbprint, thumbprint, StringComparison.OrdinalIgnoreCase))
            || state.IsNodeCertificate(thumbprint);
    }

    /// <summary>The certificate's thumbprint; null when a replacement disposed it meanwhile (asked again at the next check).</summary>
    private static string? ThumbprintOf(X509Certificate2 certificate)
    {
        try
        {
            return certificate.GetCertHashString();
        }
        catch (Exception e) when (e is CryptographicException or ObjectDisposedException)
        {
            return null;
        }
    }

    /// <summary>The thumbprint of the certificate the node at <paramref name="url"/> presents (one the cluster's rules accept); null when it does not answer.</summary>
    private async Task<string?> PresentedThumbprintAsync(string url, CancellationToken token)
    {
        try
        {
            return (await GetObservingCertificateAsync(url + "/cluster/topology", token).ConfigureAwait(false)).Thumbprint;
        }
        catch (Exception e) when (e is HttpRequestException or TaskCanceledException or JsonException or NotSupportedException)
        {
            return null;
        }
    }

    /// <summary>GETs <paramref name="uri"/> with a client of its own, to see the certificate the server presents (null over plain HTTP).</summary>
    private async Task<(JsonElement Answer, string? Thumbprint)> GetObservingCertificateAsync(string uri, CancellationToken token)
    {
        string? thumbprint = null;
        var handler = _http.CreateHandler();
        if (handler.SslOptions.RemoteCertificateValidationCallback is { } validate)
        {
            handler.SslOptions.RemoteCertificateValidationCallback = (sender, certificate, chain, errors) =>
            {
                var valid = validate(sender, certificate, chain, errors);
                if (valid && certificate is not null)
                {
                    thumbprint = certificate.GetCertHashString();
                }
                return valid;
            };
        }
        using var client = new HttpClient(handler) { Timeout = _client.Timeout };
        var answer = await client.GetFromJsonAsync<JsonElement>(uri, token).ConfigureAwait(false);
        return (answer, thumbprint);
    }

    [LoggerMessage(EventId = 791, Level = LogLevel.Warning, Message = "The certificate of node {Tag} changed while it led and the members refuse it; it steps down so that another leader records the new one")]
    private static partial void LogOwnCertificateChanged(ILogger logger, string tag);

    [LoggerMessage(EventId = 792, Level = LogLevel.Information, Message = "Node {Tag} presents another certificate ({Thumbprint}); recorded as its node certificate")]
    private static partial void LogNodeCertificateRecorded(ILogger logger, string tag, string thumbprint);

    [LoggerMessage(EventId = 793, Level = LogLevel.Warning, Message = "Could not check the members' certificates: {Reason}; tried again shortly")]
    private static partial void LogCertificateCheckFailed(ILogger logger, string reason);
}
