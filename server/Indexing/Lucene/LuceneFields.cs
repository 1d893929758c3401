using System.Globalization;
using System.Text.Json;
using Jackdaw.Server.Indexing.Definitions;
using Jackdaw.Server.Indexing.Mapping;
using Lucene.Net.Analysis;
using Lucene.Net.Analysis.Standard;
using Lucene.Net.Analysis.Util;
using Lucene.Net.Documents;
using Lucene.Net.Util;

namespace Jackdaw.Server.Indexing.Lucene;

/// <summary>
/// The layout of index entries in Lucene. Each entry is one Lucene document:
/// <code>
/// @id              the document id, lowercased (StringField): updates and deletes by this term;
///                  @id@s its sort value (order by id())
/// @docid           the document id as written (stored)
/// @ref             ids of the documents the map loaded, lowercased (load() in JavaScript maps)
/// @exists          one term per field present (null included): exists(F)
/// @null            one term per field that is null: F = null
/// F                string values: lowercased (Default), as they are (Exact), words (Search)
/// F@d              numbers (DoubleField, precision step 8): =, ranges
/// F@b              booleans ("true"/"false")
/// F@ds, F@s        sort values of the first number / string (doc values, not the field cache)
/// F@stored         the field's value as JSON, when the field is stored (projections)
/// @reduce          a map-reduce result row as JSON (stored); @id is then its reduce key's id
/// </code>
/// Numbers are doubles: integers beyond 2^53 compare at double precision. Strings longer than
/// <see cref="MaxTermChars"/> characters are not indexed as terms (Lucene's limit is 32,766 bytes).
/// </summary>
public static class LuceneFields
{
    public const string Id = "@id";
    public const string DocumentId = "@docid";
    public const string Exists = "@exists";
    public const string Null = "@null";
    public const string NumberSuffix = "@d";
    public const string BooleanSuffix = "@b";
    public const string NumberSortSuffix = "@ds";
    public const string StringSortSuffix = "@s";
    public const string StoredSuffix = "@stored";

    /// <summary>A map-reduce index's result row, as JSON (stored): what its queries answer.</summary>
    public const string ReduceResult = "@reduce";

    /// <summary>One term per document the map loaded (lowercased id): a change of it re-maps this one.</summary>
    public const string References = "@ref";

    /// <summary>
    /// The version of this layout, part of every index's fingerprint: an index built with another
    /// layout is rebuilt when it opens. 2: numbers at precision step 8.
    /// </summary>
    public const int LayoutVersion = 2;

    /// <summary>
    /// Trie terms per number: one per 8 bits (8 terms for a double), not Lucene's default of 4 bits
    /// (16 terms, 80% of Lucene's own cost per document in the auto-index benchmark); a range
    /// enumerates at most a few hundred terms. Queries must use the same step.
    /// </summary>
    public const int NumberPrecisionStep = 8;

    private static readonly FieldType NumberType = new(DoubleField.TYPE_NOT_STORED) { NumericPrecisionStep = NumberPrecisionStep };

    /// <summary>The analyzer of <see cref="FieldIndexing.Search"/> fields whose options name none, for their values and query text.</summary>
    public static readonly Analyzer SearchAnalyzer = new StandardAnalyzer(LuceneVersion.LUCENE_48, CharArraySet.Empty);

    /// <summary>The longest string indexed as a term (the evaluator compares no longer one either).</summary>
    public const int MaxTermChars = Rql.RqlEvaluator.LongestTerm;

    /// <summary>Sort values are cut to this many characters.</summary>
    public const int MaxSortChars = 256;

    /// <summary>Lowercases as queries do (invariant culture), so terms and query values agree.</summary>
    public static string Lower(string value) => value.ToLowerInvariant();

    /// <summary>The Lucene document of one entry of document <paramref name="id"/>.</summary>
    public static Document Build(string id, string lowerId, IndexField[] entry, Func<string, FieldPlan> planOf, List<string>? references = null)
    {
        var document = new Document
        {
            new StringField(Id, lowerId, Field.Store.NO),
            new StoredField(DocumentId, id),
            new SortedDocValuesField(Id + StringSortSuffix, new BytesRef(lowerId)),
        };
        if (references is not null)
        {
            foreach (var reference in references)
            {
                document.Add(new StringField(References, Lower(reference), Field.Store.NO));
            }
        }
        AddFields(document, entry, planOf);
        return document;
    }

    /// <summary>
    /// The Lucene document of a map-reduce result row: its key's id (<c>@id</c>, the term rows are
    /// replaced by), its fields, and the row's JSON stored (<see cref="ReduceResult"/>). No
    /// <c>@docid</c> nor <c>@id@s</c>: a row is not a document, answered from its JSON.
    /// </summary>
    public static Document BuildRow(string keyId, IndexField[] fields, Func<string, FieldPlan> planOf, byte[] json)
    {
        var document = new Document { new StringField(Id, keyId, Field.Store.NO) };
        AddFields(document, fields, planOf);
        document.Add(new StoredField(ReduceResult, json));
        return document;
    }

    private static void AddFields(Document document, IndexField[] entry, Func<string, FieldPlan> planOf)
    {
        foreach (var field in entry)
        {
            var plan = planOf(field.Name);
            document.Add(new StringField(Exists, plan.LuceneName, Field.Store.NO));
            var sorts = new SortState();
            AddValue(document, plan, field.Value, ref sorts);
            if (plan.Stored)
            {
                document.Add(new StoredField(plan.LuceneName + StoredSuffix, ToJson(field.Value)));
            }
        }
    }

    private struct SortState
    {
        public bool Number;
        public bool String;
    }

    private static void AddValue(Document document, FieldPlan plan, object? value, ref SortState sorts)
    {
        var name = plan.LuceneName;
        switch (value)
        {
            case null:
                document.Add(new StringField(Null, name, Field.Store.NO));
                break;
            case bool b:
                document.Add(new StringField(name + BooleanSuffix, b ? "true" : "false", Field.Store.NO));
                break;
            case long l:
                AddNumber(document, name, l, ref sorts);
                break;
            case double d:
                if (!double.IsNaN(d))
                {
                    AddNumber(document, name, d, ref sorts);
                }
                break;
            case string s:
                AddString(document, plan, s, ref sorts);
                break;
            case IndexJson json:
                AddString(document, plan, json.Json, ref sorts);
                break;
            case IReadOnlyList<object?> list:
                foreach (var item in list)
                {
                    AddValue(document, plan, item, ref sorts);
                }
                break;
            default:
                // Present (an object an auto-index met where it expected a value): exists only.
                break;
        }
    }

    private static void AddNumber(Document document, string name, double value, ref SortState sorts)
    {
        document.Add(new DoubleField(name + NumberSuffix, value, NumberType));
        if (!sorts.Number)
        {
            sorts.Number = true;
            document.Add(new DoubleDocValuesField(name + NumberSortSuffix, value));
        }
    }

    private static void AddString(Document document, FieldPlan plan, string value, ref SortState sorts)
    {
        if (plan.Indexing == FieldIndexing.No)
        {
            return;
        }
        var name = plan.LuceneName;
        switch (plan.Indexing)
        {
            case FieldIndexing.Search:
                document.Add(new TextField(name, value, Field.Store.NO));
                break;
            case FieldIndexing.Exact:
                if (value.Length <= MaxTermChars)
                {
                    document.Add(new StringField(name, value, Field.Store.NO));
                }
                break;
            default:
                if (value.Length <= MaxTermChars)
                {
                    document.Add(new StringField(name, Lower(value), Field.Store.NO));
                }
                break;
        }
        if (!sorts.String)
        {
            sorts.String = true;
            var sort = plan.Indexing == FieldIndexing.Exact ? value : Lower(value);
            if (sort.Length > MaxSortChars)
            {
                sort = sort[..MaxSortChars];
            }
            document.Add(new SortedDocValuesField(name + StringSortSuffix, new BytesRef(sort)));
        }
    }

    /// <summary>A field value as JSON (what a stored field keeps and a projection returns).</summary>
    public static string ToJson(object? value)
    {
        using var buffer = new MemoryStream();
        using (var writer = new Utf8JsonWriter(buffer))
        {
            WriteJson(writer, value);
        }
        return System.Text.Encoding.UTF8.GetString(buffer.GetBuffer(), 0, (int)buffer.Length);
    }

    private static void WriteJson(Utf8JsonWriter writer, object? value)
    {
        switch (value)
        {
            case null:
                writer.WriteNullValue();
                break;
            case bool b:
                writer.WriteBooleanValue(b);
                break;
            case long l:
                writer.WriteNumberValue(l);
                break;
            case double d when double.IsFinite(d):
                writer.WriteNumberValue(d);
                break;
            case double:
                writer.WriteNullValue();
                break;
            case string s:
                writer.WriteStringValue(s);
                break;
            case IndexJson json:
                writer.WriteRawValue(json.Json, skipInputValidation: true);
                break;
            case IReadOnlyList<object?> list:
                writer.WriteStartArray();
                foreach (var item in list)
                {
                    WriteJson(writer, item);
                }
                writer.WriteEndArray();
                break;
            default:
                writer.WriteNullValue();
                break;
        }
    }

    internal static string Format(double value) => value.ToString("R", CultureInfo.InvariantCulture);
}
