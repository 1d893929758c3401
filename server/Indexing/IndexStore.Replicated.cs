using Jackdaw.Server.Errors;
using Jackdaw.Server.Indexing.Definitions;

namespace Jackdaw.Server.Indexing;

// Definitions decided elsewhere (a cluster's record of the database): checked here before they are
// proposed, then applied as decided, whatever this node's lock mode says.
public sealed partial class IndexStore
{
    /// <summary>Checks definitions as <see cref="PutAsync"/> does before changing anything: names, maps (compiled), analyzers.</summary>
    /// <exception cref="BadRequestException">A name kept for replacements.</exception>
    /// <exception cref="IndexCompilationException">A definition does not compile.</exception>
    public void Validate(IReadOnlyList<IndexDefinition> definitions)
    {
        ValidateMaps(definitions);
        foreach (var definition in definitions)
        {
            Analyzers.Resolve(definition);
        }
    }

    /// <summary>What <see cref="Validate"/> checks that needs no database: names and maps (compiled), not analyzers.</summary>
    public static void ValidateMaps(IReadOnlyList<IndexDefinition> definitions)
    {
        foreach (var definition in definitions)
        {
            if (definition.Name.StartsWith(ReplacementPrefix, StringComparison.OrdinalIgnoreCase))
            {
                throw new BadRequestException($"'{definition.Name}': names starting with '{ReplacementPrefix}' are kept for replacements built side by side.");
            }
            if (CreateMapper(definition) is IDisposable compiled)
            {
                compiled.Dispose();
            }
        }
    }

    /// <summary>
    /// Makes the index <paramref name="definition"/> names what was decided: created, left alone when
    /// unchanged, or rebuilt side by side when changed (the lock was checked where it was decided),
    /// then given <paramref name="lockMode"/> and <paramref name="priority"/>.
    /// </summary>
    public async Task<PutResult> ApplyDecidedAsync(IndexDefinition definition, IndexLockMode lockMode, IndexPriority priority)
    {
        PutResult result;
        await _changes.WaitAsync().ConfigureAwait(false);
        try
        {
            // A new index has the decided settings from its first moment (no query sees it unlocked).
            result = await PutOneAsync(definition, ignoreLock: true, lockMode, priority).ConfigureAwait(false);
        }
        finally
        {
            _changes.Release();
        }
        await ApplyDecidedSettingsAsync(definition.Name, lockMode, priority).ConfigureAwait(false);
        return result;
    }

    /// <summary>Gives the index <paramref name="name"/> (when it exists here) the lock mode and priority decided.</summary>
    public async Task ApplyDecidedSettingsAsync(string name, IndexLockMode lockMode, IndexPriority priority)
    {
        if (TryGet(name) is { } index && (index.LockMode != lockMode || index.Priority != priority))
        {
            await UpdateSettingsAsync(name, (_, record) => record with { LockMode = lockMode, Priority = priority }).ConfigureAwait(false);
        }
    }

    /// <summary>Deletes the index <paramref name="name"/> as decided (its lock was checked there); false when it is not here.</summary>
    public async Task<bool> ApplyDecidedDeleteAsync(string name)
    {
        if (TryGet(name) is null)
        {
            return false;
        }
        try
        {
            await DeleteAsync(name, respectLock: false).ConfigureAwait(false);
            return true;
        }
        catch (IndexDoesNotExistException)
        {
            // Deleted meanwhile (an auto-index's housekeeping).
            return false;
        }
    }
}
