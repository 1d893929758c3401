using System.Text.Json;
using Jackdaw.Server.Backup;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Hosting;
using Jackdaw.Server.Routing;
using Jackdaw.Server.Security;
using Jackdaw.Server.Wire;

namespace Jackdaw.Server.Handlers;

/// <summary>
/// Restores of a backup chain into a new database, and verifications of a chain, as operations of
/// the server (<c>/operations/state</c>): what can be refused at once (a taken name, a folder
/// without a snapshot) is refused by the request itself.
/// </summary>
public sealed class RestoreHandler(ServerContext server) : HandlerBase(server)
{
    /// <summary>
    /// <c>POST /admin/restore/database</c> with RavenDB's <c>RestoreBackupConfiguration</c>
    /// <c>{"DatabaseName","BackupLocation","LastFileNameToRestore"}</c> → <c>{"OperationId","OperationNodeTag"}</c>;
    /// 409 <c>DatabaseAlreadyExistsException</c> for a taken name, 400 <c>BackupException</c> for a
    /// folder that holds no snapshot (or logical full backup).
    /// </summary>
    [Route("/admin/restore/database", "POST")]
    [Access(RouteAccess.Operator)]
    public async ValueTask Restore(RequestContext context)
    {
        RestoreRequest request;
        using (var json = await DocumentBodies.ReadJsonAsync(context.Request.BodyReader, context.RequestAborted).ConfigureAwait(false))
        {
            var root = json?.RootElement ?? default;
            if (root.ValueKind != JsonValueKind.Object)
            {
                throw new BadRequestException("The body must be a RestoreBackupConfiguration: {\"DatabaseName\":\"Orders2\",\"BackupLocation\":\"/var/backups/jackdaw/2025-01-31-02-00-00.jackdaw-Orders-snapshot\"}.");
            }
            if (String(root, "Type") is { } type && !type.Equals("Local", StringComparison.OrdinalIgnoreCase))
            {
                throw new BadRequestException($"Type '{type}': Jackdaw restores from a local folder only (Type Local, BackupLocation).");
            }
            var name = String(root, "DatabaseName");
            if (string.IsNullOrWhiteSpace(name))
            {
                throw new BadRequestException("DatabaseName is required: the name of the new database to restore into.");
            }
            if (DatabaseNames.Validate(name) is { } invalid)
            {
                throw new BadRequestException("DatabaseName: " + invalid);
            }
            if (Server.Databases.Names.Contains(name, StringComparer.OrdinalIgnoreCase) || Server.Cluster.State.Databases.ContainsKey(name))
            {
                throw new DatabaseAlreadyExistsException(name);
            }
            var location = CheckedLocation(String(root, "BackupLocation"), "BackupLocation");
            request = new RestoreRequest
            {
                BackupLocation = location,
                DatabaseName = name,
                LastFileNameToRestore = CheckedLastFile(location, String(root, "LastFileNameToRestore")),
            };
        }
        var run = new BackupRun();
        var landlord = Server.Databases;
        var cluster = Server.Cluster;
        var operation = BackupOperations.Start(Server.Operations, $"The restore of '{request.BackupLocation}' into database '{request.DatabaseName}'", run, restore: true,
            async cancel =>
            {
                var restored = await DatabaseRestore.RestoreAsync(landlord, request, run, cancel).ConfigureAwait(false);
                // In a cluster the restored database is this node's alone until nodes are added to it.
                await cluster.RecordLocalDatabaseAsync(request.DatabaseName, cancel).ConfigureAwait(false);
                return BackupOperationJson.Result(restored, verified: false);
            },
            ErrorMapping.FailureOf, context.Server.LoggerFactory.CreateLogger<RestoreHandler>());
        await WriteOperationIdAsync(context, operation.Id).ConfigureAwait(false);
    }

    /// <summary>
    /// <c>POST /admin/backup/verify?path=&amp;lastFileNameToRestore=</c>: reads the chain in <c>path</c>,
    /// checks every checksum and restores it into a throw-away folder, creating no database →
    /// <c>{"OperationId","OperationNodeTag"}</c> of a server operation.
    /// </summary>
    [Route("/admin/backup/verify", "POST")]
    [Access(RouteAccess.Operator)]
    public ValueTask Verify(RequestContext context)
    {
        var query = new UrlQuery(context.Request.QueryString.Value);
        var location = CheckedLocation(query.GetString("path"), "path");
        var lastFile = CheckedLastFile(location, query.GetString("lastFileNameToRestore"));
        var run = new BackupRun();
        var operation = BackupOperations.Start(Server.Operations, $"The verification of '{location}'", run, restore: true,
            async cancel => BackupOperationJson.Result(await DatabaseRestore.VerifyAsync(location, lastFile, run, cancel).ConfigureAwait(false), verified: true),
            ErrorMapping.FailureOf, context.Server.LoggerFactory.CreateLogger<RestoreHandler>());
        return WriteOperationIdAsync(context, operation.Id);
    }

    /// <summary>The chain's folder: absolute, existing, and holding a snapshot or a logical full backup (the chain's first file).</summary>
    private static string CheckedLocation(string? location, string field)
    {
        if (string.IsNullOrWhiteSpace(location))
        {
            throw new BadRequestException($"{field} is required: the absolute path of the chain folder (the folder holding the .jackdaw-snapshot file).");
        }
        if (!Path.IsPathFullyQualified(location))
        {
            throw new BadRequestException($"{field} '{location}' is not an absolute path.");
        }
        if (!Directory.Exists(location))
        {
            throw new BackupException($"The backup folder '{location}' does not exist.");
        }
        if (!Directory.EnumerateFiles(location, "*" + BackupChain.SnapshotExtension).Any() && !Directory.EnumerateFiles(location, "*" + LogicalChain.FullExtension).Any())
        {
            throw new BackupException($"The backup folder '{location}' holds no snapshot (*{BackupChain.SnapshotExtension}) and no logical full backup (*{LogicalChain.FullExtension}): a chain starts with one. A periodic task's chains are its sub-folders named {{date}}.jackdaw-{{database}}-{{kind}}.");
        }
        return Path.TrimEndingDirectorySeparator(location);
    }

    private static string? CheckedLastFile(string location, string? lastFile)
    {
        if (string.IsNullOrEmpty(lastFile))
        {
            return null;
        }
        if (lastFile != Path.GetFileName(lastFile) || !File.Exists(Path.Combine(location, lastFile)))
        {
            throw new BackupException($"LastFileNameToRestore '{lastFile}' is not a file of the chain in '{location}': give the name of one of its files, without a folder.");
        }
        return lastFile;
    }

    private static string? String(JsonElement json, string property) =>
        !json.TryGetProperty(property, out var value) || value.ValueKind == JsonValueKind.Null ? null
        : value.ValueKind == JsonValueKind.String ? value.GetString()
        : throw new BadRequestException($"{property} must be a string.");

}
