using Jackdaw.Server.Databases;
using Jackdaw.Server.Replication;

namespace Jackdaw.Server.Cluster;

// The record's conflict solver on this node's copy: stored by the copy's replication part (as a
// lone server stores its own), so incoming batches resolve conflicts by the cluster's policy.
internal sealed partial class ClusterDatabases
{
    private static async Task ApplyConflictSolverAsync(DatabasesLandlord landlord, ClusterDatabaseRecord record)
    {
        var replication = DatabaseReplication.Of(landlord.GetDatabase(record.Name));
        if (replication.ConflictSolverJson != record.ConflictSolver)
        {
            await replication.SetConflictSolverAsync(record.ConflictSolver!).ConfigureAwait(false);
        }
    }
}
