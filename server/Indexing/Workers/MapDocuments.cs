using System.Diagnostics;
using Jackdaw.Server.Documents;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Mapping;

namespace Jackdaw.Server.Indexing.Workers;

/// <summary>
/// Maps documents to index entries and writes them (<see cref="IndexFiles.WriteEntries"/>), each
/// document's entries in place of its earlier ones (a map index). A document that fails to map is
/// an index error and loses its entries; indexing goes on.
/// </summary>
internal sealed class MapDocuments(IIndexMapper mapper, IndexFiles files, Func<string, FieldPlan> planOf, Action<string, string, string> recordError)
    : DocumentWorker(files, recordError)
{
    public override bool UsesLoad => mapper.UsesLoad;

    /// <summary>
    /// Maps one document and writes its entries in place of its earlier ones; one
    /// <paramref name="firstMet"/> below the add horizon is added (none of its entries can exist).
    /// </summary>
    public override void Map(DocumentRecord record, MapOutput output, IMapDocumentLoader? loader, BatchTimer? timer, bool firstMet = false)
    {
        var id = record.Id;
        var lowerId = LuceneFields.Lower(id);
        var input = Prepare(record, timer, out var collection);
        output.Clear();
        var mapStarted = Stopwatch.GetTimestamp();
        try
        {
            mapper.Map(input, loader, output);
        }
        catch (IndexMapException e)
        {
            Failed(id, e, timer);
            Files.DeleteEntries(lowerId);
            return;
        }
        var writeStarted = Stopwatch.GetTimestamp();
        timer?.AddMap(collection, writeStarted - mapStarted);
        Observer?.Invoke(id, output);
        if (timer is not null)
        {
            timer.Output += output.Entries.Count;
        }
        Files.WriteEntries(id, lowerId, output.Entries, planOf, References(output), firstMet);
        timer?.AddWrite(Stopwatch.GetTimestamp() - writeStarted);
    }

    public override void Delete(string lowerId) => Files.DeleteEntries(lowerId);

    public override HashSet<string> FindReferrers(IEnumerable<string> ids) => Files.FindReferrers(ids);

    private static List<string>? References(MapOutput output) => output.LoadedIds.Count == 0 ? null : output.LoadedIds;
}
