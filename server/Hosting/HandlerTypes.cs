using Jackdaw.Server.Handlers;

namespace Jackdaw.Server.Hosting;

/// <summary>
/// The server's handler classes, named here rather than found by scanning the assembly at startup:
/// <see cref="System.Reflection.Assembly.GetTypes"/> over the server's ~1,200 types and their methods
/// took 30-75 ms of every start (perf/RESULTS.md, "Performance pass (issue 33)"). A test
/// (RouteDiscoveryTests) fails when a class with <c>[Route]</c> methods is missing from the list.
/// </summary>
internal static class HandlerTypes
{
    public static readonly Type[] Server =
    [
        typeof(AdminHandler),
        typeof(AnalyzersHandler),
        typeof(AttachmentsHandler),
        typeof(BackupHandler),
        typeof(BuildHandler),
        typeof(BulkDocsHandler),
        typeof(BulkInsertHandler),
        typeof(CertificatesHandler),
        typeof(ChangesHandler),
        typeof(CollectionsHandler),
        typeof(DatabaseStatsHandler),
        typeof(DatabasesHandler),
        typeof(DocsHandler),
        typeof(HiLoHandler),
        typeof(IdentityHandler),
        typeof(IndexesHandler),
        typeof(MetricsHandler),
        typeof(MultiGetHandler),
        typeof(OperationsHandler),
        typeof(PatchHandler),
        typeof(QueriesHandler),
        typeof(QueryOperationsHandler),
        typeof(RestoreHandler),
        typeof(RevisionsHandler),
        typeof(ServerOperationsHandler),
        typeof(SlowQueriesHandler),
        typeof(SmugglerHandler),
        typeof(StreamsHandler),
        typeof(StudioHandler),
        typeof(SubscriptionsHandler),
        typeof(TopologyHandler),
        typeof(TrafficWatchHandler),
    ];
}
