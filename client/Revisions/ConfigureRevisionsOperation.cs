using Jackdaw.Client.Revisions;

namespace Jackdaw.Client;

/// <summary>
/// Sets the database's revisions policy, replacing the previous one
/// (<c>POST /databases/{db}/admin/revisions/config</c>, RavenDB's <c>ConfigureRevisionsOperation</c>):
/// <c>await store.Maintenance.SendAsync(new ConfigureRevisionsOperation(configuration))</c>.
/// Writes after it follow it; revisions already stored stay until a write of their document trims them.
/// </summary>
public sealed class ConfigureRevisionsOperation : IMaintenanceOperation<ConfigureRevisionsOperationResult>
{
    private readonly RevisionsConfiguration _configuration;

    public ConfigureRevisionsOperation(RevisionsConfiguration configuration)
    {
        _configuration = configuration ?? throw new ArgumentNullException(nameof(configuration));
    }

    async Task<ConfigureRevisionsOperationResult> IMaintenanceOperation<ConfigureRevisionsOperationResult>.ExecuteAsync(OperationContext context, CancellationToken token)
    {
        using var answer = await RevisionsWire.PostAsync(context, "/admin/revisions/config", _configuration, token).ConfigureAwait(false);
        return RevisionsWire.ReadConfigureResult(answer);
    }
}
