using Jackdaw.Server.Errors;
using Jackdaw.Server.Security;

namespace Jackdaw.Server.Cluster;

/// <summary>
/// Registered client certificates of a clustered server, committed in the cluster's state: a
/// certificate registered through one node is known to every node (each puts it in its own
/// <see cref="CertificateStore"/>, <c>ClusterDatabases.Certificates.cs</c>), so a client keeps
/// its access on whichever node it fails over to. Proposed on the leader; the request was
/// checked before. Each method returns the state's etag with the change (<see cref="WaitForLocalAsync"/>).
/// </summary>
public sealed partial class ClusterNode
{
    /// <summary>This server's certificate store (null on an unsecured server): where the state's certificates are put.</summary>
    public CertificateStore? LocalCertificates { get; set; }

    /// <summary>The registration of <paramref name="thumbprint"/> in the cluster's state; null when none or on a lone server.</summary>
    public CertificateDefinition? RegisteredCertificate(string thumbprint) =>
        IsClustered && State.Certificates.TryGetValue(thumbprint.Trim(), out var certificate) ? certificate.Read() : null;

    /// <summary>Registers <paramref name="definitions"/> (their public parts) on every node.</summary>
    public async Task<long> PutCertificatesAsync(IReadOnlyList<CertificateDefinition> definitions, string commandId, CancellationToken token)
    {
        if (definitions.Count == 0)
        {
            return State.Etag;
        }
        var command = new ClusterCommand(commandId, ClusterCommandKind.PutCertificates) { Certificates = [.. definitions.Select(ClusterCertificate.Of)] };
        await ExecuteAsync(command, token).ConfigureAwait(false);
        return State.Etag;
    }

    /// <summary>Removes the registration of <paramref name="thumbprint"/> from every node; nothing when the state has none.</summary>
    public async Task<long> DeleteCertificateAsync(string thumbprint, string commandId, CancellationToken token)
    {
        if (!State.Certificates.TryGetValue(thumbprint, out var existing))
        {
            return State.Etag;
        }
        await ExecuteAsync(new ClusterCommand(commandId, ClusterCommandKind.DeleteCertificate) { Thumbprint = existing.Thumbprint }, token).ConfigureAwait(false);
        return State.Etag;
    }

    /// <summary>
    /// Puts the certificates registered on this server in the cluster's state (a lone server
    /// founding a cluster), so that the nodes added later know them.
    /// </summary>
    private async Task RecordLocalCertificatesAsync(CancellationToken token)
    {
        if (LocalCertificates is not { } store)
        {
            return;
        }
        var missing = store.All.Where(d => !State.Certificates.TryGetValue(d.Thumbprint, out var known) || known != ClusterCertificate.Of(d)).ToList();
        if (missing.Count == 0)
        {
            return;
        }
        try
        {
            await PutCertificatesAsync(missing, ClusterCommand.NewId(), token).ConfigureAwait(false);
        }
        catch (Exception e) when (e is ClusterException or NotLeaderException)
        {
            // The cluster is founded all the same; the certificates stay on this node (PUT them again to register them everywhere).
            LogCertificatesNotRecorded(_logger, e);
        }
    }

    [LoggerMessage(EventId = 722, Level = LogLevel.Error, Message = "The registered certificates could not be put in the cluster's state; they stay on this node only")]
    private static partial void LogCertificatesNotRecorded(ILogger logger, Exception exception);
}
