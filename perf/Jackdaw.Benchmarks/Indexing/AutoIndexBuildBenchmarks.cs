using BenchmarkDotNet.Attributes;
using Jackdaw.Benchmarks.Blittable;
using Jackdaw.Server.Indexing;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Lucene;
using Jackdaw.Server.Indexing.Mapping;
using Jackdaw.Storage.Blittable;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Analysis.Util;
using Lucene.Net.Documents;
using Lucene.Net.Index;
using Lucene.Net.Search;
using Lucene.Net.Store;
using Lucene.Net.Util;

namespace Jackdaw.Benchmarks.Indexing;

/// <summary>
/// Where the time of building Auto/Orders/ByCompanyAndFreight goes, per order, on 20,000 orders of
/// the corpus, in memory (RAMDirectory: no disk, no fsync). The baseline is the least Lucene
/// document that answers the same queries (the id, Company lowercased, Freight as a DoubleField,
/// added, not updated): Lucene's own floor. The other rows add, step by step, what the server's
/// index loop does (server/Indexing/Index.cs): the auto-index map and our entry layout
/// (LuceneFields.Build: @exists terms and sort doc values), UpdateDocument by id instead of
/// AddDocument, and the near-real-time refresh after every batch of 8,192.
/// </summary>
[MemoryDiagnoser]
public class AutoIndexBuildBenchmarks
{
    private const int Documents = 20_000;
    private const int Batch = 8 * 1024;

    private byte[][] _blittables = null!;
    private string[] _ids = null!;
    private string[] _companies = null!;
    private double[] _freights = null!;
    private AutoIndexMapper _mapper = null!;
    private Dictionary<string, FieldPlan> _plans = null!;
    private Func<string, FieldPlan> _planOf = null!;

    [GlobalSetup]
    public void Setup()
    {
        var lines = BenchmarkCorpus.Load("orders", Documents);
        using var context = new JsonOperationContext();
        _blittables = new byte[lines.Length][];
        _ids = new string[lines.Length];
        _companies = new string[lines.Length];
        _freights = new double[lines.Length];
        for (var i = 0; i < lines.Length; i++)
        {
            _blittables[i] = context.Parse(lines[i], BlittableMode.Disk).ToArray();
            context.Reset();
            using var json = System.Text.Json.JsonDocument.Parse(lines[i]);
            _ids[i] = json.RootElement.GetProperty("@metadata").GetProperty("@id").GetString()!;
            _companies[i] = json.RootElement.GetProperty("Company").GetString()!;
            _freights[i] = json.RootElement.GetProperty("Freight").GetDouble();
        }

        var definition = IndexDefinition.CreateAuto("Orders", [new AutoIndexField("Company", FieldIndexing.Default), new AutoIndexField("Freight", FieldIndexing.Default)]);
        _mapper = new AutoIndexMapper(definition);
        _plans = definition.AutoFields.ToDictionary(f => f.LuceneName, f => new FieldPlan(f.LuceneName, f.Indexing, false));
        _planOf = name => _plans[name];
    }

    private static IndexWriter NewWriter(Lucene.Net.Store.Directory directory) =>
        // As Index.NewWriter.
        new(directory, new IndexWriterConfig(LuceneVersion.LUCENE_48, new StandardAnalyzer(LuceneVersion.LUCENE_48, CharArraySet.Empty))
        {
            OpenMode = OpenMode.CREATE,
            RAMBufferSizeMB = 64,
        });

    [Benchmark(Baseline = true, OperationsPerInvoke = Documents)]
    public int LuceneFloor()
    {
        using var directory = new RAMDirectory();
        using var writer = NewWriter(directory);
        for (var i = 0; i < _ids.Length; i++)
        {
            writer.AddDocument(new Document
            {
                new StringField(LuceneFields.Id, _ids[i], Field.Store.NO),
                new StringField("Company", LuceneFields.Lower(_companies[i]), Field.Store.NO),
                new DoubleField("Freight", _freights[i], Field.Store.NO),
            });
        }
        writer.Commit();
        return writer.NumDocs;
    }

    /// <summary>The floor with Freight's trie terms at precision step 16 (4 terms per value instead of 16).</summary>
    [Benchmark(OperationsPerInvoke = Documents)]
    public int LuceneFloorPrecisionStep16()
    {
        var freightType = new FieldType(DoubleField.TYPE_NOT_STORED) { NumericPrecisionStep = 16 };
        freightType.Freeze();
        using var directory = new RAMDirectory();
        using var writer = NewWriter(directory);
        for (var i = 0; i < _ids.Length; i++)
        {
            writer.AddDocument(new Document
            {
                new StringField(LuceneFields.Id, _ids[i], Field.Store.NO),
                new StringField("Company", LuceneFields.Lower(_companies[i]), Field.Store.NO),
                new DoubleField("Freight", _freights[i], freightType),
            });
        }
        writer.Commit();
        return writer.NumDocs;
    }

    /// <summary>The floor without Freight: two string terms per document.</summary>
    [Benchmark(OperationsPerInvoke = Documents)]
    public int LuceneFloorStringsOnly()
    {
        using var directory = new RAMDirectory();
        using var writer = NewWriter(directory);
        for (var i = 0; i < _ids.Length; i++)
        {
            writer.AddDocument(new Document
            {
                new StringField(LuceneFields.Id, _ids[i], Field.Store.NO),
                new StringField("Company", LuceneFields.Lower(_companies[i]), Field.Store.NO),
            });
        }
        writer.Commit();
        return writer.NumDocs;
    }

    /// <summary>The auto-index map and our entry layout, without a writer.</summary>
    [Benchmark(OperationsPerInvoke = Documents)]
    public int MapAndBuild()
    {
        var output = new MapOutput();
        var fields = 0;
        for (var i = 0; i < _ids.Length; i++)
        {
            output.Clear();
            _mapper.Map(new MapInput(_ids[i], "Orders", _blittables[i]), null, output);
            fields += LuceneFields.Build(_ids[i], LuceneFields.Lower(_ids[i]), output.Entries[0], _planOf).Fields.Count;
        }
        return fields;
    }

    [Benchmark(OperationsPerInvoke = Documents)]
    public int MapBuildAdd() => Index(update: false, refresh: false);

    [Benchmark(OperationsPerInvoke = Documents)]
    public int MapBuildUpdate() => Index(update: true, refresh: false);

    /// <summary>What the server's loop does: update by id, refresh the searcher after every batch of 8,192.</summary>
    [Benchmark(OperationsPerInvoke = Documents)]
    public int MapBuildUpdateRefreshPerBatch() => Index(update: true, refresh: true);

    private int Index(bool update, bool refresh)
    {
        using var directory = new RAMDirectory();
        using var writer = NewWriter(directory);
        using var searchers = refresh ? new SearcherManager(writer, applyAllDeletes: true, searcherFactory: null) : null;
        var output = new MapOutput();
        for (var i = 0; i < _ids.Length; i++)
        {
            output.Clear();
            _mapper.Map(new MapInput(_ids[i], "Orders", _blittables[i]), null, output);
            var lowerId = LuceneFields.Lower(_ids[i]);
            var document = LuceneFields.Build(_ids[i], lowerId, output.Entries[0], _planOf);
            if (update)
            {
                writer.UpdateDocument(new Term(LuceneFields.Id, lowerId), document);
            }
            else
            {
                writer.AddDocument(document);
            }
            if (searchers is not null && (i + 1) % Batch == 0)
            {
                searchers.MaybeRefreshBlocking();
            }
        }
        searchers?.MaybeRefreshBlocking();
        writer.Commit();
        return writer.NumDocs;
    }
}
