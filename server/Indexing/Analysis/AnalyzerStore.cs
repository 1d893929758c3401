using System.Collections.Immutable;
using System.Text.Json;
using Jackdaw.Server.Databases;
using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;
using Lucene.Net.Analysis;
using Microsoft.Extensions.Logging;

namespace Jackdaw.Server.Indexing.Analysis;

/// <summary>
/// The analyzers of one database (RavenDB's <c>PutAnalyzersOperation</c>): their definitions in the
/// database's <c>Analyzers</c> tree (JSON <c>{"Name","Code"}</c>, keyed by the lowercased name, as
/// index definitions are kept), each compiled once into an <see cref="AnalyzerRecipe"/>. Read when
/// the database opens, before its indexes, which resolve the analyzers their fields name here
/// (<see cref="Resolve"/>). Writers serialize through the index store (its changes lock), which also
/// rebuilds the indexes a changed analyzer affects; readers see an immutable snapshot.
/// </summary>
public sealed class AnalyzerStore
{
    public const string TreeName = "Analyzers";

    private readonly DocumentDatabase _database;
    private volatile ImmutableDictionary<string, Compiled> _analyzers = ImmutableDictionary.Create<string, Compiled>(StringComparer.OrdinalIgnoreCase);

    private sealed record Compiled(AnalyzerDefinition Definition, AnalyzerRecipe Recipe);

    public AnalyzerStore(DocumentDatabase database, ILogger logger)
    {
        _database = database;
        database.RegisterTrees("Analyzers", TreeName);
        var analyzers = _analyzers.ToBuilder();
        JsonRecords.ReadAll(database, TreeName, json =>
            {
                var definition = AnalyzerDefinition.FromJson(json);
                analyzers[definition.Name] = new Compiled(definition, AnalyzerRecipe.Parse(definition.Name, definition.Code));
            },
            e => logger.LogError(e, "An analyzer of database {Database} cannot be read; it is skipped, and indexes naming it do not open", database.Name));
        _analyzers = analyzers.ToImmutable();
    }

    /// <summary>The definitions, in name order.</summary>
    public IReadOnlyList<AnalyzerDefinition> Definitions =>
        [.. _analyzers.Values.Select(c => c.Definition).OrderBy(d => d.Name, StringComparer.OrdinalIgnoreCase)];

    /// <summary>Whether the database has an analyzer of that name (ignoring case).</summary>
    public bool Contains(string name) => _analyzers.ContainsKey(name);

    /// <summary>
    /// Stores definitions already compiled, in one transaction (durable when it completes); returns
    /// the lowercased names of those that existed with another recipe (whose indexes must be rebuilt).
    /// Callers serialize.
    /// </summary>
    internal async Task<IReadOnlySet<string>> StoreAsync(IReadOnlyList<(AnalyzerDefinition Definition, AnalyzerRecipe Recipe)> analyzers)
    {
        var changed = new HashSet<string>(StringComparer.Ordinal);
        foreach (var (definition, recipe) in analyzers)
        {
            if (_analyzers.TryGetValue(definition.Name, out var existing) && existing.Recipe.Canonical != recipe.Canonical)
            {
                changed.Add(definition.Name.ToLowerInvariant());
            }
        }
        // A name stored in another casing replaces the stored one (one key per lowercased name).
        await _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, [.. analyzers.Select(a => (a.Definition.Name, (byte[]?)a.Definition.ToJson()))])).ConfigureAwait(false);
        var updated = _analyzers;
        foreach (var (definition, recipe) in analyzers)
        {
            updated = updated.Remove(definition.Name).Add(definition.Name, new Compiled(definition, recipe));
        }
        _analyzers = updated;
        return changed;
    }

    /// <summary>Removes a definition (durable when it completes); false when there was none. Callers serialize.</summary>
    internal async Task<bool> RemoveAsync(string name)
    {
        if (!_analyzers.ContainsKey(name))
        {
            return false;
        }
        await _database.EnqueueAsync(new JsonRecords.StoreCommand(TreeName, name, null)).ConfigureAwait(false);
        _analyzers = _analyzers.Remove(name);
        return true;
    }

    /// <summary>
    /// The analyzers a definition's fields name: a built-in one, else one of this database's. Every
    /// name must resolve (whatever the field's indexing, as RavenDB checks them); only Search fields
    /// use theirs.
    /// </summary>
    /// <exception cref="IndexCompilationException">A field names an analyzer that is neither built in nor the database's.</exception>
    public IndexAnalyzers Resolve(IndexDefinition definition)
    {
        if (definition.IsAuto || definition.Fields.Values.All(o => o.Analyzer is null))
        {
            return IndexAnalyzers.None;
        }
        var byField = new Dictionary<string, Analyzer>(StringComparer.Ordinal);
        var built = new Dictionary<string, Analyzer>(StringComparer.OrdinalIgnoreCase);
        var signature = new SortedDictionary<string, string>(StringComparer.Ordinal);
        var analyzers = _analyzers;
        foreach (var (field, options) in definition.Fields.OrderBy(f => f.Key, StringComparer.Ordinal))
        {
            if (options.Analyzer is not { } name)
            {
                continue;
            }
            var builtIn = BuiltInAnalyzers.Find(name);
            Compiled? custom = null;
            if (builtIn is null && !analyzers.TryGetValue(name, out custom))
            {
                throw Missing(definition, field, name, $"database '{_database.Name}'", analyzers.Keys);
            }
            if (options.Indexing != FieldIndexing.Search)
            {
                continue;
            }
            if (!built.TryGetValue(name, out var analyzer))
            {
                built[name] = analyzer = builtIn?.Create() ?? custom!.Recipe.Build();
            }
            byField[field] = analyzer;
            if (custom is not null)
            {
                signature[custom.Definition.Name.ToLowerInvariant()] = custom.Recipe.Canonical;
            }
        }
        var text = signature.Count == 0 ? null : JsonSerializer.Serialize(signature);
        return new IndexAnalyzers(byField, text, signature.Keys.ToHashSet(StringComparer.Ordinal));
    }

    /// <summary>The error of a field that names an analyzer neither built in nor among <paramref name="known"/> (those of <paramref name="owner"/>).</summary>
    public static IndexCompilationException Missing(IndexDefinition definition, string field, string name, string owner, IEnumerable<string> known)
    {
        var names = string.Join(", ", known.Order(StringComparer.OrdinalIgnoreCase).Take(20));
        return new IndexCompilationException(definition.Name,
            $"Cannot find analyzer type '{name}' for field: {field}. It is neither a built-in analyzer ({BuiltInAnalyzers.Names}) "
            + $"nor one of the analyzers of {owner} ({(names.Length == 0 ? "none yet" : names)}; PUT /databases/{{db}}/admin/analyzers adds one).");
    }
}
