using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Backup;

/// <summary>
/// Runs a backup, restore or verification in the background as an operation of
/// <paramref name="operations"/> (a database's, or the server's), which <c>operations/state</c>
/// follows and <c>operations/kill</c> cancels: the request that starts it answers its id at once.
/// </summary>
public static class BackupOperations
{
    /// <summary>
    /// Starts <paramref name="work"/> (handed the operation's kill token) as a new operation of <paramref name="operations"/>;
    /// its progress is <paramref name="run"/>'s, its result the JSON <paramref name="work"/> returns.
    /// A failure ends the operation as <paramref name="failureOf"/> describes it, and is logged.
    /// </summary>
    public static DatabaseOperation Start(
        DatabaseOperations operations,
        string what,
        BackupRun run,
        bool restore,
        Func<CancellationToken, Task<byte[]>> work,
        Func<Exception, OperationFailure> failureOf,
        ILogger logger)
    {
        var details = new BackupOperationDetails(run, restore);
        var operation = operations.StartNew(details);
        var id = operation.Id;
        _ = Task.Run(async () =>
        {
            try
            {
                details.Complete(operation, await work(operation.Killed).ConfigureAwait(false));
            }
            catch (OperationCanceledException) when (operation.Killed.IsCancellationRequested)
            {
                logger.LogWarning("{What} (operation {Operation}) was killed", what, id);
                operation.Fail(failureOf(new BackupException($"{what} was killed (operations/kill) at stage '{run.Stage}'.")), 0);
            }
            catch (Exception e)
            {
                logger.LogError(e, "{What} (operation {Operation}) failed", what, id);
                operation.Fail(failureOf(e), 0);
            }
        });
        return operation;
    }
}
