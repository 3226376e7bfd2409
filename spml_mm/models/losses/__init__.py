from .an_loss import ANLoss, an_loss

__all__ = ['ANLoss', 'an_loss']
