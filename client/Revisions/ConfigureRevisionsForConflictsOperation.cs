using Jackdaw.Client.Revisions;

namespace Jackdaw.Client;

/// <summary>
/// Sets the policy of the revisions RavenDB stores for conflicting versions of a document
/// (<c>POST /databases/{db}/admin/revisions/conflicts/config</c>). RavenDB's constructor also takes
/// the database's name; here the database is the maintenance operations' (<see cref="MaintenanceOperations.ForDatabase"/>).
/// </summary>
public sealed class ConfigureRevisionsForConflictsOperation : IMaintenanceOperation<ConfigureRevisionsOperationResult>
{
    private readonly RevisionsCollectionConfiguration _configuration;

    public ConfigureRevisionsForConflictsOperation(RevisionsCollectionConfiguration configuration)
    {
        _configuration = configuration ?? throw new ArgumentNullException(nameof(configuration));
    }

    async Task<ConfigureRevisionsOperationResult> IMaintenanceOperation<ConfigureRevisionsOperationResult>.ExecuteAsync(OperationContext context, CancellationToken token)
    {
        using var answer = await RevisionsWire.PostAsync(context, "/admin/revisions/conflicts/config", _configuration, token).ConfigureAwait(false);
        return RevisionsWire.ReadConfigureResult(answer);
    }
}
