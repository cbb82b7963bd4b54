"""TurtleSoup questioners: Mosaic-Agent, baseline, human play and the scripted questioner."""
