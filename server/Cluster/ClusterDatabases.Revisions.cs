using System.Text;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Documents.Commands;

namespace Jackdaw.Server.Cluster;

// The record's revisions configurations on this node's copy: stored by the copy (in Meta, as a
// lone server stores its own), so that its puts, deletes and replicated revisions follow the
// cluster's policy. A record without one leaves the copy's as it is.
internal sealed partial class ClusterDatabases
{
    /// <summary>Applies the record's configurations that changed since <paramref name="before"/> (null: the copy is new here, or everything is applied again).</summary>
    private static async Task ApplyRevisionsAsync(DatabasesLandlord landlord, ClusterDatabaseRecord? before, ClusterDatabaseRecord record)
    {
        var configurationChanged = record.RevisionsConfiguration is not null && before?.RevisionsConfiguration != record.RevisionsConfiguration;
        var conflictsChanged = record.RevisionsConflictsConfiguration is not null && before?.RevisionsConflictsConfiguration != record.RevisionsConflictsConfiguration;
        if (!configurationChanged && !conflictsChanged)
        {
            return;
        }
        var database = landlord.GetDatabase(record.Name);
        if (configurationChanged)
        {
            var wanted = Encoding.UTF8.GetBytes(record.RevisionsConfiguration!);
            if (!database.RevisionsConfiguration.Json.AsSpan().SequenceEqual(wanted))
            {
                await database.EnqueueAsync(new ConfigureRevisionsCommand(RevisionsConfiguration.Parse(wanted))).ConfigureAwait(false);
            }
        }
        if (conflictsChanged)
        {
            var wanted = Encoding.UTF8.GetBytes(record.RevisionsConflictsConfiguration!);
            byte[]? local;
            using (var reader = database.BeginRead())
            {
                local = reader.GetRevisionsConflictsConfiguration();
            }
            if (local is null || !local.AsSpan().SequenceEqual(wanted))
            {
                await database.EnqueueAsync(new ConfigureRevisionsForConflictsCommand(wanted)).ConfigureAwait(false);
            }
        }
    }
}
